#!/usr/bin/env python3
"""Generate the wire layer's static shape tables from botocore's service models.

    python3 tools/gen_wire_model.py            # rewrite src/wire/model_sqs.rs and model_sns.rs
    python3 tools/gen_wire_model.py --out DIR  # write them into DIR instead (the drift test)
    python3 tools/gen_wire_model.py --check-query-era PATH
        # compare the SQS overlay below with a query-era SQS model (service-2.json from
        # botocore 1.31.60, say) and report any name the overlay gets wrong or misses

Only the shapes reachable from the 40 actions are emitted. Every shape becomes one row of
a `Shape` array; rows refer to each other by index. Names are resolved the way botocore's
Query serializer and XML parser resolve them, so the Rust side never needs to know about
`locationName` inheritance: each structure member carries the element/parameter name it
travels under, each list its member name, each map its entry names.

SQS's current model is AWS JSON 1.0 (`awsQueryCompatible`); it kept `flattened` but lost the
query-era `locationName`s. They are supplied by SQS_QUERY_NAMES below, which records facts read
from the last query-protocol SQS model (botocore 1.31.60).
"""
import argparse
import gzip
import json
import os
import sys

SQS_ACTIONS = [
    "CreateQueue", "DeleteQueue", "GetQueueUrl", "ListQueues", "GetQueueAttributes",
    "SetQueueAttributes", "SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage",
    "DeleteMessageBatch", "ChangeMessageVisibility", "ChangeMessageVisibilityBatch", "PurgeQueue",
    "ListQueueTags", "TagQueue", "UntagQueue", "ListDeadLetterSourceQueues",
    "StartMessageMoveTask", "CancelMessageMoveTask", "ListMessageMoveTasks", "AddPermission",
    "RemovePermission",
]
SNS_ACTIONS = [
    "CreateTopic", "DeleteTopic", "ListTopics", "GetTopicAttributes", "SetTopicAttributes",
    "Subscribe", "Unsubscribe", "ConfirmSubscription", "ListSubscriptions",
    "ListSubscriptionsByTopic", "GetSubscriptionAttributes", "SetSubscriptionAttributes",
    "TagResource", "UntagResource", "ListTagsForResource", "Publish", "PublishBatch",
    # Published by both services; answered under both.
    "AddPermission", "RemovePermission",
]

# Query-era serialized names for SQS (facts from the query-protocol model, botocore 1.31.60).
SQS_QUERY_NAMES = {
    # (structure, member) -> the name the member travels under
    "members": {
        ("CreateQueueRequest", "Attributes"): "Attribute",
        ("CreateQueueRequest", "tags"): "Tag",
        ("GetQueueAttributesResult", "Attributes"): "Attribute",
        ("ListQueueTagsResult", "Tags"): "Tag",
        ("Message", "Attributes"): "Attribute",
        ("Message", "MessageAttributes"): "MessageAttribute",
        ("MessageAttributeValue", "StringListValues"): "StringListValue",
        ("MessageAttributeValue", "BinaryListValues"): "BinaryListValue",
        ("MessageSystemAttributeValue", "StringListValues"): "StringListValue",
        ("MessageSystemAttributeValue", "BinaryListValues"): "BinaryListValue",
        ("SendMessageBatchRequestEntry", "MessageAttributes"): "MessageAttribute",
        ("SendMessageBatchRequestEntry", "MessageSystemAttributes"): "MessageSystemAttribute",
        ("SendMessageRequest", "MessageAttributes"): "MessageAttribute",
        ("SendMessageRequest", "MessageSystemAttributes"): "MessageSystemAttribute",
        ("SetQueueAttributesRequest", "Attributes"): "Attribute",
    },
    # (structure, member) whose reference overrides the target list to flattened
    "member_flattened": {
        ("MessageAttributeValue", "StringListValues"),
        ("MessageAttributeValue", "BinaryListValues"),
        ("MessageSystemAttributeValue", "StringListValues"),
        ("MessageSystemAttributeValue", "BinaryListValues"),
    },
    # list shape -> its member's name
    "list_members": {
        "AWSAccountIdList": "AWSAccountId",
        "ActionNameList": "ActionName",
        "AttributeNameList": "AttributeName",
        "BatchResultErrorEntryList": "BatchResultErrorEntry",
        "BinaryList": "BinaryListValue",
        "ChangeMessageVisibilityBatchRequestEntryList": "ChangeMessageVisibilityBatchRequestEntry",
        "ChangeMessageVisibilityBatchResultEntryList": "ChangeMessageVisibilityBatchResultEntry",
        "DeleteMessageBatchRequestEntryList": "DeleteMessageBatchRequestEntry",
        "DeleteMessageBatchResultEntryList": "DeleteMessageBatchResultEntry",
        "ListMessageMoveTasksResultEntryList": "ListMessageMoveTasksResultEntry",
        "MessageAttributeNameList": "MessageAttributeName",
        "MessageList": "Message",
        "QueueUrlList": "QueueUrl",
        "SendMessageBatchRequestEntryList": "SendMessageBatchRequestEntry",
        "SendMessageBatchResultEntryList": "SendMessageBatchResultEntry",
        "StringList": "StringListValue",
        "TagKeyList": "TagKey",
        # Added after SQS left the query protocol (ReceiveMessage.MessageSystemAttributeNames),
        # so no query-era model names it; named like its predecessor AttributeNameList.
        "MessageSystemAttributeList": "MessageSystemAttributeName",
    },
    # map shape -> (key name, value name)
    "map_entries": {
        "MessageBodyAttributeMap": ("Name", "Value"),
        "MessageBodySystemAttributeMap": ("Name", "Value"),
        "MessageSystemAttributeMap": ("Name", "Value"),
        "QueueAttributeMap": ("Name", "Value"),
        "TagMap": ("Key", "Value"),
    },
    # shape-level names (used where the member reference names nothing itself)
    "shapes": {
        "MessageSystemAttributeMap": "Attribute",
        "QueueAttributeMap": "Attribute",
        "TagMap": "Tag",
    },
}
# Names the overlay carries that no query-era model can confirm.
SQS_POST_QUERY_NAMES = {("list_members", "MessageSystemAttributeList")}

SCALARS = {
    "string": "String", "integer": "Integer", "long": "Long", "boolean": "Boolean",
    "double": "Double", "float": "Double", "blob": "Blob", "timestamp": "Timestamp",
}


def botocore_data():
    try:
        import botocore
    except ImportError:
        sys.exit("gen_wire_model: botocore is not installed (pip install botocore)")
    return os.path.join(os.path.dirname(botocore.__file__), "data")


def load_model(service, version):
    base = os.path.join(botocore_data(), service, version)
    for name in ("service-2.json.gz", "service-2.json"):
        path = os.path.join(base, name)
        if os.path.exists(path):
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as f:
                return json.load(f)
    sys.exit(f"gen_wire_model: no model for {service} {version} under {base}")


def apply_overlay(model, overlay):
    """Write the query-era names into a (copied) JSON-protocol model."""
    shapes = json.loads(json.dumps(model["shapes"]))
    for (struct, member), name in overlay["members"].items():
        shapes[struct]["members"][member]["locationName"] = name
    for struct, member in overlay["member_flattened"]:
        shapes[struct]["members"][member]["flattened"] = True
    for lst, name in overlay["list_members"].items():
        shapes[lst]["member"]["locationName"] = name
    for mp, (k, v) in overlay["map_entries"].items():
        shapes[mp]["key"]["locationName"] = k
        shapes[mp]["value"]["locationName"] = v
    for shape, name in overlay["shapes"].items():
        shapes[shape]["locationName"] = name
    return shapes


class Emitter:
    def __init__(self, shapes):
        self.shapes = shapes
        self.index = {}
        self.rows = []

    def shape_id(self, name):
        if name in self.index:
            return self.index[name]
        idx = len(self.rows)
        self.index[name] = idx
        self.rows.append(None)
        self.rows[idx] = self.row(name)
        return idx

    def row(self, name):
        s = self.shapes[name]
        t = s["type"]
        if t in SCALARS:
            return f"Shape::{SCALARS[t]}"
        if t == "structure":
            members = []
            for mname, ref in s.get("members", {}).items():
                target_name = ref["shape"]
                target = self.shapes[target_name]
                # A reference may override the target's layout (`flattened`): that makes a
                # distinct shape row.
                if "flattened" in ref and ref["flattened"] != target.get("flattened", False):
                    target = dict(target, flattened=ref["flattened"])
                    target_name = f"{target_name}(flattened={ref['flattened']})"
                    self.shapes.setdefault(target_name, target)
                wire = ref.get("locationName") or target.get("locationName") or mname
                # botocore: a flattened list travels under its member's name when it has one.
                if target["type"] == "list" and target.get("flattened"):
                    wire = target["member"].get("locationName") or wire
                sid = self.shape_id(target_name)
                members.append(f'Member {{ name: "{mname}", wire: "{wire}", shape: {sid} }}')
            return "Shape::Structure(&[" + ", ".join(members) + "])"
        if t == "list":
            mid = self.shape_id(s["member"]["shape"])
            mname = s["member"].get("locationName") or ("member" if not s.get("flattened") else "")
            flat = "true" if s.get("flattened") else "false"
            return f'Shape::List {{ member: {mid}, member_name: "{mname}", flattened: {flat} }}'
        if t == "map":
            kid = self.shape_id(s["key"]["shape"])
            vid = self.shape_id(s["value"]["shape"])
            kn = s["key"].get("locationName", "key")
            vn = s["value"].get("locationName", "value")
            flat = "true" if s.get("flattened") else "false"
            return (f'Shape::Map {{ key: {kid}, value: {vid}, key_name: "{kn}", '
                    f'value_name: "{vn}", flattened: {flat} }}')
        raise SystemExit(f"gen_wire_model: unhandled shape type {t} ({name})")


def render(service, model, shapes, actions, default_wrapper):
    em = Emitter(shapes)
    ops = []
    for action in actions:
        op = model["operations"][action]
        inp = op.get("input", {}).get("shape")
        out = op.get("output", {})
        in_id = f"Some({em.shape_id(inp)})" if inp else "None"
        if out.get("shape"):
            out_id = f"Some({em.shape_id(out['shape'])})"
            wrapper = out.get("resultWrapper") or (action + "Result" if default_wrapper else "")
        else:
            out_id, wrapper = "None", ""
        ops.append(f'    Op {{ name: "{action}", input: {in_id}, output: {out_id}, '
                   f'result_wrapper: "{wrapper}" }},')
    names = sorted(em.index, key=em.index.get)
    lines = [
        f"//! @generated by tools/gen_wire_model.py from botocore's {service} model. Do not edit;",
        "//! rerun the script (a test fails when this file and the model disagree).",
        "",
        "use super::shape::{Member, Op, Shape};",
        "",
        f"pub static SHAPES: [Shape; {len(em.rows)}] = [",
    ]
    for i, (n, row) in enumerate(zip(names, em.rows)):
        lines.append(f"    /* {i} {n} */ {row},")
    lines.append("];")
    lines.append("")
    lines.append(f"pub static OPS: [Op; {len(ops)}] = [")
    lines.extend(ops)
    lines.append("];")
    return "\n".join(lines) + "\n"


def flat(shapes, ref):
    """Whether a member reference is laid out flattened (the reference overrides its target)."""
    return bool(ref.get("flattened", shapes[ref["shape"]].get("flattened", False)))


def check_query_era(path):
    with open(path, encoding="utf-8") as f:
        old = json.load(f)
    if old["metadata"].get("protocol") != "query":
        sys.exit(f"{path} is not a query-protocol model")
    new = load_model("sqs", "2012-11-05")
    mine = apply_overlay(new, SQS_QUERY_NAMES)
    problems = 0
    for name, s in new["shapes"].items():
        o = old["shapes"].get(name)
        if o is None:
            continue
        m = mine[name]
        pairs = []
        if s["type"] == "structure":
            for mem in s.get("members", {}):
                if mem in o.get("members", {}):
                    pairs.append((f"{name}.{mem}", o["members"][mem].get("locationName"),
                                  m["members"][mem].get("locationName")))
                    pairs.append((f"{name}.{mem} flattened", flat(old["shapes"], o["members"][mem]),
                                  flat(mine, m["members"][mem])))
        if s["type"] == "list":
            pairs.append((f"{name}.member", o["member"].get("locationName"),
                          m["member"].get("locationName")))
        if s["type"] == "map":
            for k in ("key", "value"):
                pairs.append((f"{name}.{k}", o[k].get("locationName"), m[k].get("locationName")))
        pairs.append((f"{name} (shape)", o.get("locationName"), m.get("locationName")))
        for where, want, got in pairs:
            if want != got:
                problems += 1
                print(f"MISMATCH {where}: query-era {want!r}, overlay {got!r}")
    for kind, name in sorted(SQS_POST_QUERY_NAMES):
        if name in old["shapes"]:
            print(f"NOTE {name} exists in the query-era model; drop it from SQS_POST_QUERY_NAMES")
    print(f"{problems} mismatch(es)")
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "src", "wire"))
    ap.add_argument("--check-query-era", metavar="PATH")
    args = ap.parse_args()
    if args.check_query_era:
        sys.exit(check_query_era(args.check_query_era))
    sqs = load_model("sqs", "2012-11-05")
    sns = load_model("sns", "2010-03-31")
    files = {
        "model_sqs.rs": render("SQS", sqs, apply_overlay(sqs, SQS_QUERY_NAMES), SQS_ACTIONS, True),
        "model_sns.rs": render("SNS", sns, sns["shapes"], SNS_ACTIONS, False),
    }
    os.makedirs(args.out, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
