//! SNS rules (Query only: SNS has no JSON protocol). Codes are the Query `<Code>`.
//! Fixtures (see `sns_rules.rs`): `{topic}` standard topic, `{ftopic}` FIFO topic without
//! content-based deduplication, `{ctopic}` one with it, `{t50}` a topic with 50 tags,
//! `{no_topic}` a well-formed ARN no topic has, `{subq_arn}` / `{fsubq_arn}` a standard and
//! a FIFO queue, `{sub}` a subscription of `{topic}` to `{subq_arn}` with no attributes,
//! `{no_sub}` a well-formed subscription ARN nothing has.

use super::{err, ok, Rule};

const IP: &str = "InvalidParameter";
const PVI: &str = "ParameterValueInvalid";
const NAME: &str = "API_CreateTopic: Name ('Up to 256 characters … uppercase and lowercase ASCII letters, numbers, underscores, and hyphens … FIFO topic names must end with .fifo')";
const TATTR: &str = "API_SetTopicAttributes / API_CreateTopic: Attributes (names and valid values)";
const MISSING: &str = "botocore sns: the request shape's `required` list; InvalidParameter ('a request parameter does not comply with the associated constraints')";
const PUBLISH: &str = "API_Publish: TopicArn / TargetArn / PhoneNumber ('If you don't specify a value for the TargetArn parameter, you must specify a value for the PhoneNumber or TopicArn parameters')";
const MESSAGE: &str = "API_Publish: Message ('up to 256 KB'; 'JSON object … must contain at least a top-level JSON key of \"default\"')";
const SUBJECT: &str = "API_Publish: Subject ('ASCII text that begins with a letter, number, or punctuation mark; must not include line breaks or control characters; and must be less than 100 characters long')";
const FIFO: &str = "API_Publish: MessageGroupId ('required for FIFO topics'), MessageDeduplicationId ('applies only to FIFO'; required without ContentBasedDeduplication), both up to 128 alphanumerics and punctuation";
const MATTR: &str = "SNSDG: sns-message-attributes (Name, Type String/String.Array/Number/Binary, non-empty Value) + botocore sns: Publish errors InvalidParameterValueException (ParameterValueInvalid)";
const RECORDED_BATCH: &str = "LocalStack's AWS-validated recordings: a PublishBatch entry SNS refuses fails the whole request with its error";
const BATCH: &str = "botocore sns: PublishBatch errors EmptyBatchRequest, TooManyEntriesInBatchRequest (10), BatchEntryIdsNotDistinct, InvalidBatchEntryId, BatchRequestTooLong (256 KiB total)";
const SUB: &str = "API_Subscribe: Protocol (the listed protocols), Endpoint ('For the sqs protocol, the endpoint is the ARN of an Amazon SQS queue')";
const SATTR: &str = "API_SetSubscriptionAttributes: AttributeName (DeliveryPolicy, FilterPolicy, FilterPolicyScope, RawMessageDelivery, RedrivePolicy, SubscriptionRoleArn …)";
const FILTER: &str =
    "SNSDG: subscription-filter-policy-constraints (valid JSON, 5 keys, 150 combinations, 256 KB)";
const TAGS: &str = "API_TagResource: Tags (key 1-128, value 0-256; 50 per resource → TagLimitExceeded; 'aws:' reserved)";
const NOT_FOUND: &str =
    "botocore sns: NotFoundException (NotFound, 404) 'the requested resource doesn't exist'";
const RNF: &str =
    "botocore sns: ResourceNotFoundException (ResourceNotFound, 404) on the tag actions";

#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    // --- CreateTopic ---
    err("SNS-CT-01", "CreateTopic", r#"{}"#, IP, 400, MISSING),
    err("SNS-CT-02", "CreateTopic", r#"{"Name":""}"#, IP, 400, NAME),
    err("SNS-CT-03", "CreateTopic", r#"{"Name":"{rep:n:257}"}"#, IP, 400, NAME),
    ok("SNS-CT-04", "CreateTopic", r#"{"Name":"{rep:n:256}"}"#, NAME),
    err("SNS-CT-05", "CreateTopic", r#"{"Name":"a.b"}"#, IP, 400, NAME),
    err("SNS-CT-06", "CreateTopic", r#"{"Name":"a b"}"#, IP, 400, NAME),
    err("SNS-CT-07", "CreateTopic", r#"{"Name":"nofifoattr.fifo"}"#, IP, 400, NAME),
    err("SNS-CT-08", "CreateTopic", r#"{"Name":"fifoattr","Attributes":{"FifoTopic":"true"}}"#, IP, 400, NAME),
    ok("SNS-CT-09", "CreateTopic", r#"{"Name":"{rep:f:251}.fifo","Attributes":{"FifoTopic":"true"}}"#, NAME),
    err("SNS-CT-10", "CreateTopic", r#"{"Name":"{rep:f:252}.fifo","Attributes":{"FifoTopic":"true"}}"#, IP, 400, NAME),
    err("SNS-CT-11", "CreateTopic", r#"{"Name":"c1","Attributes":{"Bogus":"x"}}"#, IP, 400, TATTR),
    err("SNS-CT-12", "CreateTopic", r#"{"Name":"c2","Attributes":{"ContentBasedDeduplication":"true"}}"#, IP, 400, "API_CreateTopic: ContentBasedDeduplication ('Enables content-based deduplication for FIFO topics')"),
    err("SNS-CT-13", "CreateTopic", r#"{"Name":"c3","Attributes":{"FifoThroughputScope":"Topic"}}"#, IP, 400, "API_CreateTopic: FifoThroughputScope ('Applies to FIFO topics only')"),
    err("SNS-CT-14", "CreateTopic", r#"{"Name":"c4.fifo","Attributes":{"FifoTopic":"true","FifoThroughputScope":"Queue"}}"#, IP, 400, "API_CreateTopic: FifoThroughputScope ('Topic', 'MessageGroup')"),
    err("SNS-CT-15", "CreateTopic", r#"{"Name":"c5","Attributes":{"SignatureVersion":"3"}}"#, IP, 400, "API_CreateTopic: SignatureVersion ('1 (default) for SHA1 and 2 for SHA256')"),
    err("SNS-CT-16", "CreateTopic", r#"{"Name":"c6","Attributes":{"TracingConfig":"Sometimes"}}"#, IP, 400, "API_CreateTopic: TracingConfig (PassThrough or Active)"),
    err("SNS-CT-17", "CreateTopic", r#"{"Name":"c7","Attributes":{"Policy":"not json"}}"#, IP, 400, TATTR),
    ok("SNS-CT-18", "CreateTopic", r#"{"Name":"t"}"#, "API_CreateTopic: 'This action is idempotent'"),
    err("SNS-CT-19", "CreateTopic", r#"{"Name":"t","Attributes":{"DisplayName":"different"}}"#, IP, 400, "choice: a repeat CreateTopic with different attributes is InvalidParameter"),
    err("SNS-CT-20", "CreateTopic", r#"{"Name":"c8","Tags":[{tags:51}]}"#, "TagLimitExceeded", 400, TAGS),
    err("SNS-CT-21", "CreateTopic", r#"{"Name":"c9","Tags":[{"Key":"aws:x","Value":"v"}]}"#, IP, 400, TAGS),
    err("SNS-CT-22", "CreateTopic", r#"{"Name":"c10","Attributes":{"ArchivePolicy":"{\"MessageRetentionPeriod\":\"30\"}"}}"#, IP, 400, "API_CreateTopic: ArchivePolicy (FIFO topics only)"),

    // --- DeleteTopic / GetTopicAttributes / SetTopicAttributes / ListTopics ---
    err("SNS-DT-01", "DeleteTopic", r#"{"TopicArn":"not-an-arn"}"#, IP, 400, "choice: a malformed TopicArn is InvalidParameter"),
    ok("SNS-DT-02", "DeleteTopic", r#"{"TopicArn":"{no_topic}"}"#, "API_DeleteTopic: 'Deleting a topic that doesn't exist … does not result in an error'"),
    err("SNS-DT-03", "DeleteTopic", r#"{}"#, IP, 400, MISSING),
    err("SNS-GT-01", "GetTopicAttributes", r#"{"TopicArn":"{no_topic}"}"#, "NotFound", 404, NOT_FOUND),
    err("SNS-GT-02", "GetTopicAttributes", r#"{"TopicArn":"arn:aws:sns:us-east-1:000000000000:a.b"}"#, IP, 400, "choice: a malformed TopicArn is InvalidParameter"),
    err("SNS-ST-01", "SetTopicAttributes", r#"{"TopicArn":"{topic}"}"#, IP, 400, MISSING),
    err("SNS-ST-02", "SetTopicAttributes", r#"{"TopicArn":"{topic}","AttributeName":"Bogus","AttributeValue":"x"}"#, IP, 400, TATTR),
    err("SNS-ST-03", "SetTopicAttributes", r#"{"TopicArn":"{ftopic}","AttributeName":"FifoTopic","AttributeValue":"true"}"#, IP, 400, "API_CreateTopic: FifoTopic ('You can't change a topic type after the topic is created')"),
    ok("SNS-ST-04", "SetTopicAttributes", r#"{"TopicArn":"{topic}","AttributeName":"DisplayName","AttributeValue":"shown"}"#, TATTR),
    err("SNS-ST-05", "SetTopicAttributes", r#"{"TopicArn":"{no_topic}","AttributeName":"DisplayName","AttributeValue":"x"}"#, "NotFound", 404, NOT_FOUND),
    err("SNS-LT-01", "ListTopics", r#"{"NextToken":"!!not-a-token!!"}"#, IP, 400, "choice: an undecodable NextToken is InvalidParameter"),

    // --- Publish: targets ---
    err("SNS-PB-01", "Publish", r#"{"Message":"m"}"#, IP, 400, PUBLISH),
    err("SNS-PB-02", "Publish", r#"{"TopicArn":"{topic}","TargetArn":"{topic}","Message":"m"}"#, IP, 400, PUBLISH),
    err("SNS-PB-03", "Publish", r#"{"TopicArn":"{topic}","PhoneNumber":"+15555550100","Message":"m"}"#, IP, 400, PUBLISH),
    err("SNS-PB-04", "Publish", r#"{"TargetArn":"arn:aws:sns:us-east-1:000000000000:endpoint/GCM/app/x","Message":"m"}"#, IP, 400, "contract: platform endpoints are not served"),
    err("SNS-PB-05", "Publish", r#"{"PhoneNumber":"+15555550100","Message":"m"}"#, IP, 400, "contract: SMS is not served"),
    err("SNS-PB-06", "Publish", r#"{"TopicArn":"{no_topic}","Message":"m"}"#, "NotFound", 404, NOT_FOUND),
    err("SNS-PB-07", "Publish", r#"{"TopicArn":"not-an-arn","Message":"m"}"#, IP, 400, "choice: a malformed TopicArn is InvalidParameter"),
    // --- Publish: the message ---
    err("SNS-PB-08", "Publish", r#"{"TopicArn":"{topic}"}"#, IP, 400, MISSING),
    err("SNS-PB-09", "Publish", r#"{"TopicArn":"{topic}","Message":""}"#, IP, 400, MESSAGE),
    err("SNS-PB-10", "Publish", r#"{"TopicArn":"{topic}","Message":"{rep:x:262145}"}"#, IP, 400, MESSAGE),
    ok("SNS-PB-11", "Publish", r#"{"TopicArn":"{topic}","Message":"{rep:x:262144}"}"#, MESSAGE),
    err("SNS-PB-12", "Publish", r#"{"TopicArn":"{topic}","Message":"{rep:x:262100}","MessageAttributes":{"a":{"DataType":"String","StringValue":"{rep:v:100}"}}}"#, IP, 400, "API_Publish: MessageAttributes + Message ('The total size limit … is 256 KB', attributes included)"),
    err("SNS-PB-13", "Publish", r#"{"TopicArn":"{topic}","Message":"{\"sqs\":\"x\"}","MessageStructure":"json"}"#, IP, 400, MESSAGE),
    err("SNS-PB-14", "Publish", r#"{"TopicArn":"{topic}","Message":"not json","MessageStructure":"json"}"#, IP, 400, MESSAGE),
    ok("SNS-PB-15", "Publish", r#"{"TopicArn":"{topic}","Message":"{\"default\":\"d\",\"sqs\":\"s\"}","MessageStructure":"json"}"#, MESSAGE),
    err("SNS-PB-16", "Publish", r#"{"TopicArn":"{topic}","Message":"m","MessageStructure":"xml"}"#, IP, 400, "API_Publish: MessageStructure ('Valid value: json')"),
    // --- Publish: the subject ---
    err("SNS-PB-17", "Publish", r#"{"TopicArn":"{topic}","Message":"m","Subject":"{rep:s:101}"}"#, IP, 400, SUBJECT),
    ok("SNS-PB-18", "Publish", r#"{"TopicArn":"{topic}","Message":"m","Subject":"{rep:s:100}"}"#, SUBJECT),
    err("SNS-PB-19", "Publish", r#"{"TopicArn":"{topic}","Message":"m","Subject":"line\nbreak"}"#, IP, 400, SUBJECT),
    err("SNS-PB-20", "Publish", r#"{"TopicArn":"{topic}","Message":"m","Subject":""}"#, IP, 400, SUBJECT),
    err("SNS-PB-36", "Publish", r#"{"TopicArn":"{topic}","Message":"m","Subject":" leading space"}"#, IP, 400, SUBJECT),
    err("SNS-PB-21", "Publish", r#"{"TopicArn":"{topic}","Message":"m","Subject":"caf\u00e9"}"#, IP, 400, SUBJECT),
    // --- Publish: FIFO topics ---
    err("SNS-PB-22", "Publish", r#"{"TopicArn":"{ftopic}","Message":"m","MessageDeduplicationId":"d"}"#, IP, 400, FIFO),
    err("SNS-PB-23", "Publish", r#"{"TopicArn":"{ftopic}","Message":"m","MessageGroupId":"g"}"#, IP, 400, FIFO),
    ok("SNS-PB-24", "Publish", r#"{"TopicArn":"{ctopic}","Message":"m","MessageGroupId":"g"}"#, FIFO),
    err("SNS-PB-25", "Publish", r#"{"TopicArn":"{ftopic}","Message":"m","MessageGroupId":"{rep:g:129}","MessageDeduplicationId":"d"}"#, IP, 400, FIFO),
    err("SNS-PB-26", "Publish", r#"{"TopicArn":"{ftopic}","Message":"m","MessageGroupId":"g","MessageDeduplicationId":"a b"}"#, IP, 400, FIFO),
    ok("SNS-PB-27", "Publish", r#"{"TopicArn":"{ftopic}","Message":"m","MessageGroupId":"{rep:g:128}","MessageDeduplicationId":"{rep:d:128}"}"#, FIFO),
    err("SNS-PB-28", "Publish", r#"{"TopicArn":"{topic}","Message":"m","MessageDeduplicationId":"d"}"#, IP, 400, FIFO),
    // --- Publish: message attributes ---
    err("SNS-PB-29", "Publish", r#"{"TopicArn":"{topic}","Message":"m","MessageAttributes":{"a":{"DataType":"String","StringValue":""}}}"#, PVI, 400, MATTR),
    err("SNS-PB-30", "Publish", r#"{"TopicArn":"{topic}","Message":"m","MessageAttributes":{"a":{"DataType":"Text","StringValue":"v"}}}"#, PVI, 400, MATTR),
    err("SNS-PB-31", "Publish", r#"{"TopicArn":"{topic}","Message":"m","MessageAttributes":{"a":{"DataType":"Number","StringValue":"ten"}}}"#, PVI, 400, MATTR),
    err("SNS-PB-32", "Publish", r#"{"TopicArn":"{topic}","Message":"m","MessageAttributes":{"AWS.a":{"DataType":"String","StringValue":"v"}}}"#, PVI, 400, MATTR),
    err("SNS-PB-33", "Publish", r#"{"TopicArn":"{topic}","Message":"m","MessageAttributes":{"a":{"DataType":"String.Array","StringValue":"not an array"}}}"#, PVI, 400, MATTR),
    ok("SNS-PB-34", "Publish", r#"{"TopicArn":"{topic}","Message":"m","MessageAttributes":{"a":{"DataType":"String.Array","StringValue":"[\"x\",1,true]"},"b":{"DataType":"Binary","BinaryValue":"AAEC"},"c":{"DataType":"Number","StringValue":"-1.5e3"}}}"#, MATTR),
    err("SNS-PB-35", "Publish", r#"{"TopicArn":"{topic}","Message":"m","MessageAttributes":{"a":{"DataType":"String"}}}"#, PVI, 400, MATTR),

    // --- PublishBatch ---
    err("SNS-PT-01", "PublishBatch", r#"{"TopicArn":"{topic}","PublishBatchRequestEntries":[]}"#, "EmptyBatchRequest", 400, BATCH),
    err("SNS-PT-02", "PublishBatch", r#"{"TopicArn":"{topic}","PublishBatchRequestEntries":[{entries:11}]}"#, "TooManyEntriesInBatchRequest", 400, BATCH),
    ok("SNS-PT-03", "PublishBatch", r#"{"TopicArn":"{topic}","PublishBatchRequestEntries":[{entries:10}]}"#, BATCH),
    err("SNS-PT-04", "PublishBatch", r#"{"TopicArn":"{topic}","PublishBatchRequestEntries":[{"Id":"a","Message":"m"},{"Id":"a","Message":"m"}]}"#, "BatchEntryIdsNotDistinct", 400, BATCH),
    err("SNS-PT-05", "PublishBatch", r#"{"TopicArn":"{topic}","PublishBatchRequestEntries":[{"Id":"{rep:i:81}","Message":"m"}]}"#, "InvalidBatchEntryId", 400, "API_PublishBatchRequestEntry: Id ('up to 80 characters … alphanumeric characters, hyphens (-), and underscores (_)')"),
    err("SNS-PT-06", "PublishBatch", r#"{"TopicArn":"{topic}","PublishBatchRequestEntries":[{"Id":"a.b","Message":"m"}]}"#, "InvalidBatchEntryId", 400, "API_PublishBatchRequestEntry: Id"),
    err("SNS-PT-07", "PublishBatch", r#"{"TopicArn":"{topic}","PublishBatchRequestEntries":[{"Id":"a","Message":"{rep:x:200000}"},{"Id":"b","Message":"{rep:x:70000}"}]}"#, "BatchRequestTooLong", 400, BATCH),
    // SNS checks every entry before delivering any: one it refuses fails the request (recorded:
    // LocalStack's AWS-validated test_publish_batch_exceptions, test_empty_or_wrong_message_attributes).
    err("SNS-PT-08", "PublishBatch", r#"{"TopicArn":"{topic}","PublishBatchRequestEntries":[{"Id":"ok","Message":"m"},{"Id":"empty","Message":""}]}"#, IP, 400, RECORDED_BATCH),
    err("SNS-PT-09", "PublishBatch", r#"{"TopicArn":"{ftopic}","PublishBatchRequestEntries":[{"Id":"ok","Message":"m","MessageGroupId":"g","MessageDeduplicationId":"p1"},{"Id":"nogroup","Message":"m","MessageDeduplicationId":"p2"}]}"#, IP, 400, FIFO),
    err("SNS-PT-10", "PublishBatch", r#"{"TopicArn":"{no_topic}","PublishBatchRequestEntries":[{"Id":"a","Message":"m"}]}"#, "NotFound", 404, NOT_FOUND),
    err("SNS-PT-11", "PublishBatch", r#"{"PublishBatchRequestEntries":[{"Id":"a","Message":"m"}]}"#, IP, 400, MISSING),

    // --- Subscribe ---
    err("SNS-SU-01", "Subscribe", r#"{"TopicArn":"{topic}","Endpoint":"{subq_arn}"}"#, IP, 400, MISSING),
    err("SNS-SU-02", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"carrier-pigeon","Endpoint":"{subq_arn}"}"#, IP, 400, SUB),
    err("SNS-SU-03", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"https","Endpoint":"https://example.com/hook"}"#, IP, 400, "an https endpoint on a host not in QUEEN_SQS_SNS_HTTP_ALLOWED_HOSTS (loopback only by default)"),
    err("SNS-SU-04", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"https://example.com/not-an-arn"}"#, IP, 400, SUB),
    err("SNS-SU-05", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs"}"#, IP, 400, SUB),
    err("SNS-SU-06", "Subscribe", r#"{"TopicArn":"{no_topic}","Protocol":"sqs","Endpoint":"{subq_arn}"}"#, "NotFound", 404, NOT_FOUND),
    err("SNS-SU-07", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"{subq_arn}","Attributes":{"Bogus":"x"}}"#, IP, 400, SATTR),
    err("SNS-SU-08", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"{subq_arn}","Attributes":{"RawMessageDelivery":"maybe"}}"#, IP, 400, "API_SetSubscriptionAttributes: RawMessageDelivery (true or false)"),
    err("SNS-SU-09", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"{subq_arn}","Attributes":{"FilterPolicy":"{not json"}}"#, IP, 400, FILTER),
    err("SNS-SU-10", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"{subq_arn}","Attributes":{"FilterPolicyScope":"Everything"}}"#, IP, 400, "API_SetSubscriptionAttributes: FilterPolicyScope (MessageAttributes or MessageBody)"),
    err("SNS-SU-11", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"{subq_arn}","Attributes":{"FilterPolicy":"{\"a\":[1],\"b\":[1],\"c\":[1],\"d\":[1],\"e\":[1],\"f\":[1]}"}}"#, IP, 400, FILTER),
    err("SNS-SU-12", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"{subq_arn}","Attributes":{"FilterPolicy":"{\"a\":[{rep:1,:150}1]}","FilterPolicyScope":"MessageAttributes"}}"#, IP, 400, FILTER),
    err("SNS-SU-13", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"{subq_arn}","Attributes":{"RawMessageDelivery":"true"}}"#, IP, 400, "choice: a repeat Subscribe with different attributes is InvalidParameter (docs/divergences.md, Settled)"),
    ok("SNS-SU-14", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"{subq_arn}"}"#, "API_Subscribe: 'This action is idempotent' (same attributes)"),
    err("SNS-SU-15", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"{fsubq_arn}"}"#, IP, 400, "contract: a standard topic refuses a FIFO queue"),
    err("SNS-SU-17", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"{subq_arn}","Attributes":{"FilterPolicy":"{\"a\":[\"{rep:x:262200}\"]}"}}"#, IP, 400, FILTER),
    err("SNS-SU-16", "Subscribe", r#"{"TopicArn":"{topic}","Protocol":"sqs","Endpoint":"{subq_arn}","Attributes":{"RedrivePolicy":"not json"}}"#, IP, 400, SATTR),

    // --- Subscription attributes, Unsubscribe, ConfirmSubscription, listings ---
    err("SNS-SS-01", "SetSubscriptionAttributes", r#"{"SubscriptionArn":"{sub}"}"#, IP, 400, MISSING),
    err("SNS-SS-02", "SetSubscriptionAttributes", r#"{"SubscriptionArn":"{sub}","AttributeName":"Bogus","AttributeValue":"x"}"#, IP, 400, SATTR),
    err("SNS-SS-03", "SetSubscriptionAttributes", r#"{"SubscriptionArn":"{sub}","AttributeName":"RawMessageDelivery","AttributeValue":"yes"}"#, IP, 400, SATTR),
    err("SNS-SS-04", "SetSubscriptionAttributes", r#"{"SubscriptionArn":"{sub}","AttributeName":"FilterPolicy","AttributeValue":"[1]"}"#, IP, 400, FILTER),
    ok("SNS-SS-05", "SetSubscriptionAttributes", r#"{"SubscriptionArn":"{sub}","AttributeName":"FilterPolicy","AttributeValue":"{\"a\":[\"x\"]}"}"#, FILTER),
    err("SNS-SS-06", "SetSubscriptionAttributes", r#"{"SubscriptionArn":"{no_sub}","AttributeName":"RawMessageDelivery","AttributeValue":"true"}"#, "NotFound", 404, NOT_FOUND),
    err("SNS-SS-07", "SetSubscriptionAttributes", r#"{"SubscriptionArn":"not-an-arn","AttributeName":"RawMessageDelivery","AttributeValue":"true"}"#, IP, 400, "choice: a malformed SubscriptionArn is InvalidParameter"),
    err("SNS-SS-08", "SetSubscriptionAttributes", r#"{"SubscriptionArn":"{sub}","AttributeName":"Protocol","AttributeValue":"sqs"}"#, IP, 400, SATTR),
    err("SNS-GS-01", "GetSubscriptionAttributes", r#"{"SubscriptionArn":"{no_sub}"}"#, "NotFound", 404, NOT_FOUND),
    err("SNS-GS-02", "GetSubscriptionAttributes", r#"{"SubscriptionArn":"not-an-arn"}"#, IP, 400, "choice: a malformed SubscriptionArn is InvalidParameter"),
    err("SNS-US-01", "Unsubscribe", r#"{"SubscriptionArn":"not-an-arn"}"#, IP, 400, "choice: a malformed SubscriptionArn is InvalidParameter"),
    err("SNS-CS-01", "ConfirmSubscription", r#"{"TopicArn":"{topic}","Token":"abc"}"#, IP, 400, "contract: ConfirmSubscription can never succeed here"),
    err("SNS-LS-02", "ListSubscriptions", r#"{"NextToken":"!!not-a-token!!"}"#, IP, 400, "choice: an undecodable NextToken is InvalidParameter"),
    err("SNS-LS-01", "ListSubscriptionsByTopic", r#"{"TopicArn":"{no_topic}"}"#, "NotFound", 404, NOT_FOUND),

    // --- Tags ---
    err("SNS-TR-01", "TagResource", r#"{"ResourceArn":"{t50}","Tags":[{"Key":"one-more","Value":"v"}]}"#, "TagLimitExceeded", 400, TAGS),
    ok("SNS-TR-02", "TagResource", r#"{"ResourceArn":"{t50}","Tags":[{"Key":"k0","Value":"replaced"}]}"#, "API_TagResource: 'Adding a tag with the same key as an existing tag overwrites it'"),
    err("SNS-TR-03", "TagResource", r#"{"ResourceArn":"{topic}","Tags":[{"Key":"{rep:k:129}","Value":"v"}]}"#, IP, 400, TAGS),
    ok("SNS-TR-04", "TagResource", r#"{"ResourceArn":"{topic}","Tags":[{"Key":"{rep:k:128}","Value":"{rep:v:256}"}]}"#, TAGS),
    err("SNS-TR-05", "TagResource", r#"{"ResourceArn":"{topic}","Tags":[{"Key":"k","Value":"{rep:v:257}"}]}"#, IP, 400, TAGS),
    err("SNS-TR-06", "TagResource", r#"{"ResourceArn":"{topic}","Tags":[{"Key":"aws:k","Value":"v"}]}"#, IP, 400, TAGS),
    err("SNS-TR-07", "TagResource", r#"{"ResourceArn":"{topic}","Tags":[{"Key":"dup","Value":"1"},{"Key":"dup","Value":"2"}]}"#, IP, 400, "choice: one key twice in one request is InvalidParameter"),
    err("SNS-TR-08", "TagResource", r#"{"ResourceArn":"{no_topic}","Tags":[{"Key":"k","Value":"v"}]}"#, "ResourceNotFound", 404, RNF),
    err("SNS-UR-01", "UntagResource", r#"{"ResourceArn":"{no_topic}","TagKeys":["k"]}"#, "ResourceNotFound", 404, RNF),
    err("SNS-LR-01", "ListTagsForResource", r#"{"ResourceArn":"{no_topic}"}"#, "ResourceNotFound", 404, RNF),

    // --- Permissions, common errors ---
    err("SNS-AP-01", "AddPermission", r#"{"TopicArn":"{topic}","AWSAccountId":["111122223333"],"ActionName":["Publish"]}"#, IP, 400, MISSING),
    err("SNS-AP-02", "AddPermission", r#"{"TopicArn":"{topic}","Label":"l","ActionName":["Publish"]}"#, IP, 400, MISSING),
    err("SNS-RP-01", "RemovePermission", r#"{"TopicArn":"{topic}"}"#, IP, 400, MISSING),
    err("SNS-CE-01", "CreatePlatformApplication", r#"{"Name":"a","Platform":"GCM","Attributes":{"PlatformCredential":"x"}}"#, "InvalidAction", 400, "contract: the mobile push family is not served (InvalidAction)"),
];
