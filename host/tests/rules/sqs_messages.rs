//! SQS rules of the message actions: bodies, message attributes, FIFO send rules, batches,
//! receive selectors, receipt handles, visibility, move tasks. Fixtures (see
//! `sqs_rules.rs`): `{std}`, `{fifo}` (no content-based deduplication), `{cbd}` (a FIFO
//! queue with it), `{small}` (MaximumMessageSize 1024), `{empty}` (receives find nothing),
//! `{handle}` (a live receipt handle of `{held}`), `{other_handle}` (one of another queue),
//! `{dlq_arn}` (a dead-letter queue), `{std_arn}`, `{gone_arn}`, `{gone}`.

use super::{entry, err, ok, Rule};

const BODY: &str = "API_SendMessage: MessageBody (allowed Unicode #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF, else InvalidMessageContents)";
const SIZE: &str = "API_SetQueueAttributes: MaximumMessageSize ('how many bytes a message can contain before Amazon SQS rejects it'); SQSDG: sqs-message-metadata (attributes count towards the size)";
const MA_NAME: &str = "API_MessageAttributeValue / SQSDG: sqs-message-metadata (Name: up to 256 of A-Za-z0-9 _ - .; not AWS./Amazon.; no leading, trailing or successive periods)";
const MA_TYPE: &str =
    "SQSDG: sqs-message-metadata (DataType String, Number or Binary, optionally .label)";
const MA_VALUE: &str = "SQSDG: sqs-message-metadata (Number: 38 digits of precision, 10^-128 to 10^+126; values must not be empty)";
const MA_COUNT: &str = "SQSDG: quotas-messages (message attributes: 10 per message)";
const FIFO: &str = "API_SendMessage: MessageGroupId ('If you do not provide a MessageGroupId when sending a message to a FIFO queue, the action fails')";
const DEDUP: &str = "API_SendMessage: MessageDeduplicationId ('If you don't provide a MessageDeduplicationId and the queue doesn't have ContentBasedDeduplication set, the action fails')";
const IDS: &str = "API_SendMessage: MessageGroupId / MessageDeduplicationId (up to 128 alphanumerics and punctuation)";
const DELAY: &str = "API_SendMessage: DelaySeconds ('Valid values: 0 to 900'; 'When you set FifoQueue, you can't set DelaySeconds per message')";
const BATCH: &str = "botocore sqs: batch errors EmptyBatchRequest, TooManyEntriesInBatchRequest (10), BatchEntryIdsNotDistinct, InvalidBatchEntryId";
const BATCH_ID: &str = "API_SendMessageBatchRequestEntry: Id ('up to 80 characters … alphanumeric characters, hyphens(-), and underscores (_)')";
const BATCH_SIZE: &str = "API_SendMessageBatch: 'The maximum allowed individual message size and the maximum total payload size … are both 1 MiB'";
const RECEIVE: &str =
    "API_ReceiveMessage: MaxNumberOfMessages 1-10, WaitTimeSeconds 0-20, VisibilityTimeout 0-43200";
const ATTEMPT: &str = "API_ReceiveMessage: ReceiveRequestAttemptId ('The maximum length … is 128 characters … alphanumeric characters and punctuation')";
const SELECT: &str = "API_ReceiveMessage: MessageAttributeNames ('All or .*', prefix 'bar.*'), MessageSystemAttributeNames";
const HANDLE: &str =
    "botocore sqs: ReceiptHandleIsInvalid ('The specified receipt handle isn't valid')";
const VIS: &str = "API_ChangeMessageVisibility: VisibilityTimeout ('Values range: 0 to 43200. Maximum: 12 hours')";
const MOVE: &str = "API_StartMessageMoveTask: SourceArn ('only ARNs of dead-letter queues'), MaxNumberOfMessagesPerSecond ('The maximum value … is 500')";
const MISSING: &str =
    "botocore sqs: the request shape's `required` list; CommonErrors MissingParameter";
const UNKNOWN_Q: &str = "botocore sqs: QueueDoesNotExist ('Ensure that the QueueUrl is correct')";

#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    // --- SendMessage: the body ---
    err("SQS-SM-01", "SendMessage", r#"{"QueueUrl":"{std}"}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-SM-02", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":""}"#, "MissingRequiredParameterException", 400, "API_SendMessage: MessageBody ('The minimum size is one character')"),
    err("SQS-SM-03", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"a\u0001b"}"#, "InvalidMessageContents", 400, BODY),
    err("SQS-SM-04", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"a\u001fb"}"#, "InvalidMessageContents", 400, BODY),
    err("SQS-SM-05", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"a\ufffeb"}"#, "InvalidMessageContents", 400, BODY),
    err("SQS-SM-06", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"a\uffffb"}"#, "InvalidMessageContents", 400, BODY),
    ok("SQS-SM-07", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"\t\n\r \ud7ff\ue000\ufffd\ud83d\ude00"}"#, BODY),
    err("SQS-SM-08", "SendMessage", r#"{"QueueUrl":"{small}","MessageBody":"{rep:x:1025}"}"#, "InvalidParameterValueException", 400, SIZE),
    ok("SQS-SM-09", "SendMessage", r#"{"QueueUrl":"{small}","MessageBody":"{rep:x:1024}"}"#, SIZE),
    err("SQS-SM-10", "SendMessage", r#"{"QueueUrl":"{small}","MessageBody":"{rep:x:1000}","MessageAttributes":{"attr":{"DataType":"String","StringValue":"{rep:v:20}"}}}"#, "InvalidParameterValueException", 400, SIZE),
    err("SQS-SM-11", "SendMessage", r#"{"QueueUrl":"{gone}","MessageBody":"x"}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),
    // --- SendMessage: DelaySeconds ---
    err("SQS-SM-12", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","DelaySeconds":901}"#, "InvalidParameterValueException", 400, DELAY),
    err("SQS-SM-13", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","DelaySeconds":-1}"#, "InvalidParameterValueException", 400, DELAY),
    ok("SQS-SM-14", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","DelaySeconds":900}"#, DELAY),
    // --- SendMessage: FIFO rules ---
    err("SQS-SM-15", "SendMessage", r#"{"QueueUrl":"{fifo}","MessageBody":"x","MessageDeduplicationId":"d"}"#, "MissingRequiredParameterException", 400, FIFO),
    err("SQS-SM-16", "SendMessage", r#"{"QueueUrl":"{fifo}","MessageBody":"x","MessageGroupId":"g"}"#, "InvalidParameterValueException", 400, DEDUP),
    ok("SQS-SM-17", "SendMessage", r#"{"QueueUrl":"{cbd}","MessageBody":"x","MessageGroupId":"g"}"#, DEDUP),
    err("SQS-SM-18", "SendMessage", r#"{"QueueUrl":"{fifo}","MessageBody":"x","MessageGroupId":"g","MessageDeduplicationId":"d1","DelaySeconds":5}"#, "InvalidParameterValueException", 400, DELAY),
    err("SQS-SM-19", "SendMessage", r#"{"QueueUrl":"{fifo}","MessageBody":"x","MessageGroupId":"{rep:g:129}","MessageDeduplicationId":"d2"}"#, "InvalidParameterValueException", 400, IDS),
    ok("SQS-SM-20", "SendMessage", r#"{"QueueUrl":"{fifo}","MessageBody":"x","MessageGroupId":"{rep:g:128}","MessageDeduplicationId":"{rep:d:128}"}"#, IDS),
    err("SQS-SM-21", "SendMessage", r#"{"QueueUrl":"{fifo}","MessageBody":"x","MessageGroupId":"a b","MessageDeduplicationId":"d3"}"#, "InvalidParameterValueException", 400, IDS),
    err("SQS-SM-22", "SendMessage", r#"{"QueueUrl":"{fifo}","MessageBody":"x","MessageGroupId":"g","MessageDeduplicationId":"{rep:d:129}"}"#, "InvalidParameterValueException", 400, IDS),
    err("SQS-SM-23", "SendMessage", r#"{"QueueUrl":"{fifo}","MessageBody":"x","MessageGroupId":"g","MessageDeduplicationId":"caf\u00e9"}"#, "InvalidParameterValueException", 400, IDS),
    ok("SQS-SM-24", "SendMessage", r##"{"QueueUrl":"{fifo}","MessageBody":"x","MessageGroupId":"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~","MessageDeduplicationId":"Az9!~"}"##, IDS),
    err("SQS-SM-25", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageDeduplicationId":"d"}"#, "InvalidParameterValueException", 400, "API_SendMessage: MessageDeduplicationId ('This parameter applies only to FIFO queues')"),
    ok("SQS-SM-26", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageGroupId":"tenant-1"}"#, "API_SendMessage: MessageGroupId ('In standard queues, using MessageGroupId enables fair queues')"),
    // --- SendMessage: message attributes ---
    err("SQS-SM-27", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{{attrs:11}}}"#, "InvalidParameterValueException", 400, MA_COUNT),
    ok("SQS-SM-28", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{{attrs:10}}}"#, MA_COUNT),
    err("SQS-SM-29", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"{rep:n:257}":{"DataType":"String","StringValue":"v"}}}"#, "InvalidParameterValueException", 400, MA_NAME),
    ok("SQS-SM-30", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"{rep:n:256}":{"DataType":"String","StringValue":"v"}}}"#, MA_NAME),
    err("SQS-SM-31", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"AWS.x":{"DataType":"String","StringValue":"v"}}}"#, "InvalidParameterValueException", 400, MA_NAME),
    err("SQS-SM-32", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"amazon.x":{"DataType":"String","StringValue":"v"}}}"#, "InvalidParameterValueException", 400, MA_NAME),
    err("SQS-SM-33", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{".a":{"DataType":"String","StringValue":"v"}}}"#, "InvalidParameterValueException", 400, MA_NAME),
    err("SQS-SM-34", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a.":{"DataType":"String","StringValue":"v"}}}"#, "InvalidParameterValueException", 400, MA_NAME),
    err("SQS-SM-35", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a..b":{"DataType":"String","StringValue":"v"}}}"#, "InvalidParameterValueException", 400, MA_NAME),
    err("SQS-SM-36", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a b":{"DataType":"String","StringValue":"v"}}}"#, "InvalidParameterValueException", 400, MA_NAME),
    ok("SQS-SM-37", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a.b-c_D9":{"DataType":"String","StringValue":"v"},"AWSx":{"DataType":"String","StringValue":"v"}}}"#, MA_NAME),
    err("SQS-SM-38", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"DataType":"Text","StringValue":"v"}}}"#, "InvalidParameterValueException", 400, MA_TYPE),
    err("SQS-SM-39", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"StringValue":"v"}}}"#, "InvalidParameterValueException", 400, MA_TYPE),
    ok("SQS-SM-40", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"DataType":"Number.float","StringValue":"1.5"},"b":{"DataType":"String.json","StringValue":"{}"},"c":{"DataType":"Binary.gif","BinaryValue":"AAEC"}}}"#, MA_TYPE),
    err("SQS-SM-41", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"DataType":"String.","StringValue":"v"}}}"#, "InvalidParameterValueException", 400, MA_TYPE),
    err("SQS-SM-42", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"DataType":"String","StringValue":""}}}"#, "InvalidParameterValueException", 400, MA_VALUE),
    err("SQS-SM-43", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"DataType":"String"}}}"#, "InvalidParameterValueException", 400, MA_VALUE),
    err("SQS-SM-44", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"DataType":"Binary","StringValue":"v"}}}"#, "InvalidParameterValueException", 400, MA_TYPE),
    err("SQS-SM-45", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"DataType":"Number","StringValue":"ten"}}}"#, "InvalidParameterValueException", 400, MA_VALUE),
    err("SQS-SM-46", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"DataType":"Number","StringValue":"1e126"}}}"#, "InvalidParameterValueException", 400, MA_VALUE),
    err("SQS-SM-47", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"DataType":"Number","StringValue":"{rep:9:39}"}}}"#, "InvalidParameterValueException", 400, MA_VALUE),
    ok("SQS-SM-48", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"DataType":"Number","StringValue":"-{rep:9:38}"},"b":{"DataType":"Number","StringValue":"1e-128"}}}"#, MA_VALUE),
    err("SQS-SM-49", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageAttributes":{"a":{"DataType":"Binary","BinaryValue":""}}}"#, "InvalidParameterValueException", 400, MA_VALUE),
    err("SQS-SM-50", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageSystemAttributes":{"Other":{"DataType":"String","StringValue":"v"}}}"#, "InvalidParameterValueException", 400, "API_SendMessage: MessageSystemAttributes ('the only supported message system attribute is AWSTraceHeader')"),
    err("SQS-SM-51", "SendMessage", r#"{"QueueUrl":"{std}","MessageBody":"x","MessageSystemAttributes":{"AWSTraceHeader":{"DataType":"Number","StringValue":"1"}}}"#, "InvalidParameterValueException", 400, "API_SendMessage: MessageSystemAttributes ('Its type must be String')"),

    // --- SendMessageBatch ---
    err("SQS-SB-01", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[]}"#, "EmptyBatchRequest", 400, BATCH),
    err("SQS-SB-02", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{entries:11}]}"#, "TooManyEntriesInBatchRequest", 400, BATCH),
    ok("SQS-SB-03", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{entries:10}]}"#, BATCH),
    err("SQS-SB-04", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"a","MessageBody":"x"},{"Id":"a","MessageBody":"y"}]}"#, "BatchEntryIdsNotDistinct", 400, BATCH),
    err("SQS-SB-05", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"{rep:i:81}","MessageBody":"x"}]}"#, "InvalidBatchEntryId", 400, BATCH_ID),
    err("SQS-SB-06", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"a.b","MessageBody":"x"}]}"#, "InvalidBatchEntryId", 400, BATCH_ID),
    ok("SQS-SB-07", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"{rep:i:80}","MessageBody":"x"},{"Id":"A-z_0","MessageBody":"y"}]}"#, BATCH_ID),
    err("SQS-SB-08", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"a","MessageBody":"{rep:x:600000}"},{"Id":"b","MessageBody":"{rep:x:600000}"}]}"#, "BatchRequestTooLong", 400, BATCH_SIZE),
    entry("SQS-SB-09", "SendMessageBatch", r#"{"QueueUrl":"{small}","Entries":[{"Id":"ok","MessageBody":"x"},{"Id":"big","MessageBody":"{rep:x:1025}"}]}"#, "big", "InvalidParameterValue", "API_SendMessageBatch: 'The result of sending each message is reported individually' + MaximumMessageSize"),
    entry("SQS-SB-10", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"ok","MessageBody":"x"},{"Id":"bad","MessageBody":"a\u0001"}]}"#, "bad", "InvalidMessageContents", BODY),
    entry("SQS-SB-11", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"ok","MessageBody":"x"},{"Id":"late","MessageBody":"x","DelaySeconds":901}]}"#, "late", "InvalidParameterValue", DELAY),
    entry("SQS-SB-12", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"ok","MessageBody":"x"},{"Id":"many","MessageBody":"x","MessageAttributes":{{attrs:11}}}]}"#, "many", "InvalidParameterValue", MA_COUNT),
    err("SQS-SB-13", "SendMessageBatch", r#"{"QueueUrl":"{fifo}","Entries":[{"Id":"ok","MessageBody":"x","MessageGroupId":"g","MessageDeduplicationId":"b1"},{"Id":"nogroup","MessageBody":"x","MessageDeduplicationId":"b2"}]}"#, "InvalidParameterValueException", 400, "recorded against SQS (LocalStack test_send_batch_missing_message_group_id_for_fifo_queue): the whole batch fails"),
    err("SQS-SB-14", "SendMessageBatch", r#"{"QueueUrl":"{fifo}","Entries":[{"Id":"ok","MessageBody":"x","MessageGroupId":"g","MessageDeduplicationId":"b3"},{"Id":"nodedup","MessageBody":"x","MessageGroupId":"g"}]}"#, "InvalidParameterValueException", 400, "recorded against SQS (LocalStack test_send_batch_missing_deduplication_id_for_fifo_queue): the whole batch fails"),
    entry("SQS-SB-15", "SendMessageBatch", r#"{"QueueUrl":"{fifo}","Entries":[{"Id":"ok","MessageBody":"x","MessageGroupId":"g","MessageDeduplicationId":"b4"},{"Id":"delayed","MessageBody":"x","MessageGroupId":"g","MessageDeduplicationId":"b5","DelaySeconds":3}]}"#, "delayed", "InvalidParameterValue", DELAY),
    entry("SQS-SB-16", "SendMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"ok","MessageBody":"x"},{"Id":"nobody"}]}"#, "nobody", "MissingParameter", MISSING),
    err("SQS-SB-17", "SendMessageBatch", r#"{"QueueUrl":"{gone}","Entries":[{"Id":"a","MessageBody":"x"}]}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),

    // --- ReceiveMessage ---
    err("SQS-RM-01", "ReceiveMessage", r#"{"QueueUrl":"{empty}","MaxNumberOfMessages":0}"#, "InvalidParameterValueException", 400, RECEIVE),
    err("SQS-RM-02", "ReceiveMessage", r#"{"QueueUrl":"{empty}","MaxNumberOfMessages":11}"#, "InvalidParameterValueException", 400, RECEIVE),
    ok("SQS-RM-03", "ReceiveMessage", r#"{"QueueUrl":"{empty}","MaxNumberOfMessages":10,"WaitTimeSeconds":0}"#, RECEIVE),
    err("SQS-RM-04", "ReceiveMessage", r#"{"QueueUrl":"{empty}","WaitTimeSeconds":21}"#, "InvalidParameterValueException", 400, RECEIVE),
    err("SQS-RM-05", "ReceiveMessage", r#"{"QueueUrl":"{empty}","WaitTimeSeconds":-1}"#, "InvalidParameterValueException", 400, RECEIVE),
    err("SQS-RM-06", "ReceiveMessage", r#"{"QueueUrl":"{empty}","VisibilityTimeout":43201}"#, "InvalidParameterValueException", 400, RECEIVE),
    err("SQS-RM-07", "ReceiveMessage", r#"{"QueueUrl":"{empty}","VisibilityTimeout":-1}"#, "InvalidParameterValueException", 400, RECEIVE),
    ok("SQS-RM-08", "ReceiveMessage", r#"{"QueueUrl":"{empty}","VisibilityTimeout":43200,"WaitTimeSeconds":0}"#, RECEIVE),
    ok("SQS-RM-09", "ReceiveMessage", r#"{"QueueUrl":"{empty}","MessageAttributeNames":["All",".*","foo.*","exact"],"WaitTimeSeconds":0}"#, SELECT),
    ok("SQS-RM-10", "ReceiveMessage", r#"{"QueueUrl":"{empty}","AttributeNames":["All"],"MessageSystemAttributeNames":["SentTimestamp","ApproximateReceiveCount","MessageGroupId"],"WaitTimeSeconds":0}"#, SELECT),
    err("SQS-RM-11", "ReceiveMessage", r#"{"QueueUrl":"{gone}"}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),
    err("SQS-RM-12", "ReceiveMessage", r#"{}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-RM-13", "ReceiveMessage", r#"{"QueueUrl":"{empty}","ReceiveRequestAttemptId":"{rep:a:129}"}"#, "InvalidParameterValueException", 400, ATTEMPT),
    err("SQS-RM-14", "ReceiveMessage", r#"{"QueueUrl":"{empty}","ReceiveRequestAttemptId":"a b"}"#, "InvalidParameterValueException", 400, ATTEMPT),
    ok("SQS-RM-15", "ReceiveMessage", r##"{"QueueUrl":"{empty}","ReceiveRequestAttemptId":"{rep:a:120}!#~","WaitTimeSeconds":0}"##, ATTEMPT),

    // --- DeleteMessage / DeleteMessageBatch ---
    err("SQS-DM-01", "DeleteMessage", r#"{"QueueUrl":"{std}"}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-DM-02", "DeleteMessage", r#"{"QueueUrl":"{std}","ReceiptHandle":"not-a-handle"}"#, "ReceiptHandleIsInvalid", 400, HANDLE),
    err("SQS-DM-03", "DeleteMessage", r#"{"QueueUrl":"{held}","ReceiptHandle":"{other_handle}"}"#, "ReceiptHandleIsInvalid", 400, "contract: a handle minted for another queue is ReceiptHandleIsInvalid"),
    err("SQS-DM-04", "DeleteMessage", r#"{"QueueUrl":"{gone}","ReceiptHandle":"{handle}"}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),
    err("SQS-DB-01", "DeleteMessageBatch", r#"{"QueueUrl":"{std}","Entries":[]}"#, "EmptyBatchRequest", 400, BATCH),
    err("SQS-DB-02", "DeleteMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{entries:11}]}"#, "TooManyEntriesInBatchRequest", 400, BATCH),
    err("SQS-DB-03", "DeleteMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"a","ReceiptHandle":"h"},{"Id":"a","ReceiptHandle":"h"}]}"#, "BatchEntryIdsNotDistinct", 400, BATCH),
    err("SQS-DB-04", "DeleteMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"a b","ReceiptHandle":"h"}]}"#, "InvalidBatchEntryId", 400, BATCH_ID),
    entry("SQS-DB-05", "DeleteMessageBatch", r#"{"QueueUrl":"{std}","Entries":[{"Id":"bad","ReceiptHandle":"not-a-handle"}]}"#, "bad", "ReceiptHandleIsInvalid", HANDLE),

    // --- ChangeMessageVisibility / ChangeMessageVisibilityBatch ---
    err("SQS-CV-01", "ChangeMessageVisibility", r#"{"QueueUrl":"{held}","ReceiptHandle":"{handle}"}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-CV-02", "ChangeMessageVisibility", r#"{"QueueUrl":"{held}","ReceiptHandle":"{handle}","VisibilityTimeout":43201}"#, "InvalidParameterValueException", 400, VIS),
    err("SQS-CV-03", "ChangeMessageVisibility", r#"{"QueueUrl":"{held}","ReceiptHandle":"{handle}","VisibilityTimeout":-1}"#, "InvalidParameterValueException", 400, VIS),
    err("SQS-CV-04", "ChangeMessageVisibility", r#"{"QueueUrl":"{held}","ReceiptHandle":"not-a-handle","VisibilityTimeout":10}"#, "ReceiptHandleIsInvalid", 400, HANDLE),
    ok("SQS-CV-05", "ChangeMessageVisibility", r#"{"QueueUrl":"{held}","ReceiptHandle":"{handle}","VisibilityTimeout":600}"#, VIS),
    err("SQS-CV-06", "ChangeMessageVisibility", r#"{"QueueUrl":"{held}","ReceiptHandle":"{handle}","VisibilityTimeout":43200}"#, "InvalidParameterValueException", 400, "API_ChangeMessageVisibility: 'If you attempt to set the VisibilityTimeout to a value greater than the maximum time left, Amazon SQS returns an error'"),
    err("SQS-CV-07", "ChangeMessageVisibility", r#"{"QueueUrl":"{held}","ReceiptHandle":"{other_handle}","VisibilityTimeout":10}"#, "ReceiptHandleIsInvalid", 400, "contract: a handle minted for another queue is ReceiptHandleIsInvalid"),
    err("SQS-CB-01", "ChangeMessageVisibilityBatch", r#"{"QueueUrl":"{held}","Entries":[]}"#, "EmptyBatchRequest", 400, BATCH),
    err("SQS-CB-02", "ChangeMessageVisibilityBatch", r#"{"QueueUrl":"{held}","Entries":[{entries:11}]}"#, "TooManyEntriesInBatchRequest", 400, BATCH),
    err("SQS-CB-03", "ChangeMessageVisibilityBatch", r#"{"QueueUrl":"{held}","Entries":[{"Id":"a","ReceiptHandle":"h","VisibilityTimeout":1},{"Id":"a","ReceiptHandle":"h","VisibilityTimeout":1}]}"#, "BatchEntryIdsNotDistinct", 400, BATCH),
    entry("SQS-CB-04", "ChangeMessageVisibilityBatch", r#"{"QueueUrl":"{held}","Entries":[{"Id":"bad","ReceiptHandle":"not-a-handle","VisibilityTimeout":10}]}"#, "bad", "ReceiptHandleIsInvalid", HANDLE),
    entry("SQS-CB-05", "ChangeMessageVisibilityBatch", r#"{"QueueUrl":"{held}","Entries":[{"Id":"ok","ReceiptHandle":"{handle}","VisibilityTimeout":600},{"Id":"long","ReceiptHandle":"{handle}","VisibilityTimeout":43201}]}"#, "long", "InvalidParameterValue", VIS),

    // --- Message move tasks ---
    err("SQS-MT-01", "StartMessageMoveTask", r#"{}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-MT-02", "StartMessageMoveTask", r#"{"SourceArn":"{gone_arn}"}"#, "ResourceNotFoundException", 404, "botocore sqs: StartMessageMoveTask errors ResourceNotFoundException ('One or more specified resources don't exist')"),
    err("SQS-MT-03", "StartMessageMoveTask", r#"{"SourceArn":"{std_arn}"}"#, "InvalidParameterValueException", 400, MOVE),
    err("SQS-MT-04", "StartMessageMoveTask", r#"{"SourceArn":"{dlq_arn}","MaxNumberOfMessagesPerSecond":501}"#, "InvalidParameterValueException", 400, MOVE),
    err("SQS-MT-05", "StartMessageMoveTask", r#"{"SourceArn":"{dlq_arn}","MaxNumberOfMessagesPerSecond":0}"#, "InvalidParameterValueException", 400, MOVE),
    err("SQS-MT-06", "StartMessageMoveTask", r#"{"SourceArn":"{dlq_arn}","DestinationArn":"{gone_arn}"}"#, "ResourceNotFoundException", 404, "API_StartMessageMoveTask: DestinationArn + ResourceNotFoundException"),
    ok("SQS-MT-07", "StartMessageMoveTask", r#"{"SourceArn":"{dlq_arn}","MaxNumberOfMessagesPerSecond":500}"#, MOVE),
    err("SQS-MT-08", "CancelMessageMoveTask", r#"{"TaskHandle":"not-a-task"}"#, "InvalidParameterValueException", 400, "recorded against SQS (LocalStack test_cancel_with_invalid_task_handle): a handle that is not one"),
    err("SQS-MT-09", "CancelMessageMoveTask", r#"{}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-MT-10", "ListMessageMoveTasks", r#"{"SourceArn":"{dlq_arn}","MaxResults":11}"#, "InvalidParameterValueException", 400, "API_ListMessageMoveTasks: MaxResults ('The upper limit is 10')"),
    err("SQS-MT-11", "ListMessageMoveTasks", r#"{"SourceArn":"{dlq_arn}","MaxResults":0}"#, "InvalidParameterValueException", 400, "API_ListMessageMoveTasks: MaxResults"),
    ok("SQS-MT-12", "ListMessageMoveTasks", r#"{"SourceArn":"{dlq_arn}","MaxResults":10}"#, "API_ListMessageMoveTasks: MaxResults"),
    err("SQS-MT-13", "ListMessageMoveTasks", r#"{"SourceArn":"{gone_arn}"}"#, "ResourceNotFoundException", 404, "botocore sqs: ListMessageMoveTasks errors ResourceNotFoundException"),
];
