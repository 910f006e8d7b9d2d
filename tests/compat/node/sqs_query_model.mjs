// aws-sdk v2 2.1693.0 ships SQS as AWS JSON 1.0 (apis/sqs-2012-11-05.min.json has
// metadata.protocol "json"), so on its own it would never exercise the Query/XML half.
// The 2012-11-05 API is the same under both protocols; what JSON lost is the query-era
// serialized names (locationName) and the <Action>Result wrappers. This module takes the
// shipped model, switches metadata to "query", adds the wrappers and writes the query-era
// names back in, so `new AWS.SQS({ apiConfig: queryModel() })` keeps v2's SQS customizations
// (MD5 checks, QueueUrl as endpoint) and speaks Query/XML.
//
// The names are facts from the last query-protocol SQS model (the same facts the wire
// layer's tools/gen_wire_model.py records as SQS_QUERY_NAMES). The shipped v2 model inlines
// most shapes, so they are applied by member name while walking every operation rather than
// by shape name.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

// A map member -> [the name the member travels under, key name, value name].
const MAPS = {
  Attributes: ["Attribute", "Name", "Value"],
  MessageAttributes: ["MessageAttribute", "Name", "Value"],
  MessageSystemAttributes: ["MessageSystemAttribute", "Name", "Value"],
  tags: ["Tag", "Key", "Value"],
  Tags: ["Tag", "Key", "Value"],
};

// A list member -> its element name (flattened lists travel under the element's name).
// A function gets the operation name, for the batch entry lists named after their action.
const LISTS = {
  AttributeNames: "AttributeName",
  MessageAttributeNames: "MessageAttributeName",
  // Newer than the query protocol; named like its predecessor AttributeNames.
  MessageSystemAttributeNames: "MessageSystemAttributeName",
  QueueUrls: "QueueUrl",
  queueUrls: "QueueUrl",
  Messages: "Message",
  Failed: "BatchResultErrorEntry",
  TagKeys: "TagKey",
  AWSAccountIds: "AWSAccountId",
  Actions: "ActionName",
  StringListValues: "StringListValue",
  BinaryListValues: "BinaryListValue",
  Results: "ListMessageMoveTasksResultEntry",
  Entries: (op) => `${op}RequestEntry`,
  Successful: (op) => `${op}ResultEntry`,
};

export function queryModel() {
  const shipped = require("aws-sdk/apis/sqs-2012-11-05.min.json");
  const model = JSON.parse(JSON.stringify(shipped));
  const m = model.metadata;
  m.protocol = "query";
  m.protocols = ["query"];
  m.xmlNamespace = "http://queue.amazonaws.com/doc/2012-11-05/";
  delete m.jsonVersion;
  delete m.targetPrefix;
  delete m.awsQueryCompatible;

  const target = (ref) => (ref.shape ? model.shapes[ref.shape] : ref);
  const walk = (ref, op) => {
    const t = target(ref);
    if (t.type === "structure") {
      for (const [name, member] of Object.entries(t.members || {})) {
        const mt = target(member);
        if (mt.type === "map" && MAPS[name]) {
          const [loc, k, v] = MAPS[name];
          member.locationName = loc;
          mt.key.locationName = k;
          mt.value.locationName = v;
        } else if (mt.type === "list" && LISTS[name]) {
          const n = LISTS[name];
          mt.member.locationName = typeof n === "function" ? n(op) : n;
          member.flattened = true;
        }
        walk(member, op);
      }
    } else if (t.type === "list") {
      walk(t.member, op);
    } else if (t.type === "map") {
      walk(t.value, op);
    }
  };
  for (const [op, def] of Object.entries(model.operations)) {
    if (def.input) walk(def.input, op);
    if (def.output) {
      walk(def.output, op);
      def.output.resultWrapper = `${op}Result`;
    }
  }
  return model;
}
