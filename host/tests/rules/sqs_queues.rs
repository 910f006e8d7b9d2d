//! SQS rules of the queue actions: names, attributes, re-creation, listing, tags,
//! permissions, purge, and what every action answers an unknown queue or action.
//! Fixtures (see `sqs_rules.rs`): `{std}` standard, `{fifo}` FIFO, `{scratch}` a standard
//! queue the accepted `SetQueueAttributes` rows change, `{tags50}` a queue with 50 tags,
//! `{dlq}`/`{dlq_arn}` a dead-letter queue, `{fdlq_arn}` a FIFO one, `{std_arn}`,
//! `{purgeme}`, `{gone}` a URL no queue has, `{foreign}` another account's URL.

use super::{err, ok, Rule};

const NAME: &str = "API_CreateQueue: QueueName (up to 80 alphanumerics, - and _; FIFO ends .fifo)";
const ATTRS: &str = "API_SetQueueAttributes / API_CreateQueue: Attributes (valid values)";
const IAN: &str = "botocore sqs: CreateQueue/SetQueueAttributes errors InvalidAttributeName ('The specified attribute doesn't exist')";
const REDRIVE: &str = "API_SetQueueAttributes: RedrivePolicy (maxReceiveCount; 'the dead-letter queue of a FIFO queue must also be a FIFO queue')";
const TAGS: &str = "SQSDG: quotas-queues (tags: 50 per queue; key 1-128, value 0-256 Unicode; reserved aws: prefix)";
const UNKNOWN_Q: &str = "botocore sqs: QueueDoesNotExist ('Ensure that the QueueUrl is correct')";
const MISSING: &str =
    "botocore sqs: the request shape's `required` list; CommonErrors MissingParameter";

#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    // --- CreateQueue: the name ---
    err("SQS-CQ-01", "CreateQueue", r#"{}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-CQ-02", "CreateQueue", r#"{"QueueName":""}"#, "InvalidParameterValueException", 400, NAME),
    err("SQS-CQ-03", "CreateQueue", r#"{"QueueName":"{rep:n:81}"}"#, "InvalidParameterValueException", 400, NAME),
    ok("SQS-CQ-04", "CreateQueue", r#"{"QueueName":"{rep:n:80}"}"#, NAME),
    err("SQS-CQ-05", "CreateQueue", r#"{"QueueName":"a.b"}"#, "InvalidParameterValueException", 400, NAME),
    err("SQS-CQ-06", "CreateQueue", r#"{"QueueName":"a b"}"#, "InvalidParameterValueException", 400, NAME),
    err("SQS-CQ-07", "CreateQueue", r#"{"QueueName":"caf\u00e9"}"#, "InvalidParameterValueException", 400, NAME),
    ok("SQS-CQ-08", "CreateQueue", r#"{"QueueName":"Az09-_"}"#, NAME),
    err("SQS-CQ-09", "CreateQueue", r#"{"QueueName":".fifo","Attributes":{"FifoQueue":"true"}}"#, "InvalidParameterValueException", 400, NAME),
    ok("SQS-CQ-10", "CreateQueue", r#"{"QueueName":"{rep:f:75}.fifo","Attributes":{"FifoQueue":"true"}}"#, NAME),
    err("SQS-CQ-11", "CreateQueue", r#"{"QueueName":"{rep:f:76}.fifo","Attributes":{"FifoQueue":"true"}}"#, "InvalidParameterValueException", 400, NAME),
    // --- CreateQueue: the .fifo suffix and FifoQueue agree, both ways ---
    err("SQS-CQ-12", "CreateQueue", r#"{"QueueName":"nofifoattr.fifo"}"#, "InvalidParameterValueException", 400, "API_CreateQueue: Attributes FifoQueue ('If you don't specify the FifoQueue attribute, Amazon SQS creates a standard queue') + QueueName"),
    err("SQS-CQ-13", "CreateQueue", r#"{"QueueName":"fifoattr","Attributes":{"FifoQueue":"true"}}"#, "InvalidParameterValueException", 400, "API_CreateQueue: QueueName ('A FIFO queue name must end with the .fifo suffix')"),
    err("SQS-CQ-14", "CreateQueue", r#"{"QueueName":"falsefifo.fifo","Attributes":{"FifoQueue":"false"}}"#, "InvalidAttributeName", 400, "choice: SQS answers FifoQueue=false as an unknown attribute, before the name"),
    err("SQS-CQ-15", "CreateQueue", r#"{"QueueName":"falsestd","Attributes":{"FifoQueue":"false"}}"#, "InvalidAttributeName", 400, "choice: SQS answers FifoQueue=false as an unknown attribute"),
    err("SQS-CQ-16", "CreateQueue", r#"{"QueueName":"maybe.fifo","Attributes":{"FifoQueue":"maybe"}}"#, "InvalidAttributeValue", 400, "API_CreateQueue: FifoQueue ('Valid values are true and false')"),
    // --- CreateQueue: attribute ranges ---
    err("SQS-CQ-17", "CreateQueue", r#"{"QueueName":"r1","Attributes":{"DelaySeconds":"901"}}"#, "InvalidAttributeValue", 400, ATTRS),
    err("SQS-CQ-18", "CreateQueue", r#"{"QueueName":"r2","Attributes":{"DelaySeconds":"-1"}}"#, "InvalidAttributeValue", 400, ATTRS),
    ok("SQS-CQ-19", "CreateQueue", r#"{"QueueName":"r3","Attributes":{"DelaySeconds":"900"}}"#, ATTRS),
    err("SQS-CQ-20", "CreateQueue", r#"{"QueueName":"r4","Attributes":{"DelaySeconds":"ten"}}"#, "InvalidAttributeValue", 400, ATTRS),
    err("SQS-CQ-21", "CreateQueue", r#"{"QueueName":"r5","Attributes":{"MaximumMessageSize":"1023"}}"#, "InvalidAttributeValue", 400, ATTRS),
    err("SQS-CQ-22", "CreateQueue", r#"{"QueueName":"r6","Attributes":{"MaximumMessageSize":"1048577"}}"#, "InvalidAttributeValue", 400, ATTRS),
    ok("SQS-CQ-23", "CreateQueue", r#"{"QueueName":"r7","Attributes":{"MaximumMessageSize":"1024"}}"#, ATTRS),
    ok("SQS-CQ-24", "CreateQueue", r#"{"QueueName":"r8","Attributes":{"MaximumMessageSize":"1048576"}}"#, ATTRS),
    err("SQS-CQ-25", "CreateQueue", r#"{"QueueName":"r9","Attributes":{"MessageRetentionPeriod":"59"}}"#, "InvalidAttributeValue", 400, ATTRS),
    err("SQS-CQ-26", "CreateQueue", r#"{"QueueName":"r10","Attributes":{"MessageRetentionPeriod":"1209601"}}"#, "InvalidAttributeValue", 400, ATTRS),
    ok("SQS-CQ-27", "CreateQueue", r#"{"QueueName":"r11","Attributes":{"MessageRetentionPeriod":"60"}}"#, ATTRS),
    ok("SQS-CQ-28", "CreateQueue", r#"{"QueueName":"r12","Attributes":{"MessageRetentionPeriod":"1209600"}}"#, ATTRS),
    err("SQS-CQ-29", "CreateQueue", r#"{"QueueName":"r13","Attributes":{"ReceiveMessageWaitTimeSeconds":"21"}}"#, "InvalidAttributeValue", 400, ATTRS),
    ok("SQS-CQ-30", "CreateQueue", r#"{"QueueName":"r14","Attributes":{"ReceiveMessageWaitTimeSeconds":"20"}}"#, ATTRS),
    err("SQS-CQ-31", "CreateQueue", r#"{"QueueName":"r15","Attributes":{"VisibilityTimeout":"43201"}}"#, "InvalidAttributeValue", 400, ATTRS),
    ok("SQS-CQ-32", "CreateQueue", r#"{"QueueName":"r16","Attributes":{"VisibilityTimeout":"43200"}}"#, ATTRS),
    err("SQS-CQ-33", "CreateQueue", r#"{"QueueName":"r17","Attributes":{"KmsDataKeyReusePeriodSeconds":"59"}}"#, "InvalidAttributeValue", 400, ATTRS),
    err("SQS-CQ-34", "CreateQueue", r#"{"QueueName":"r18","Attributes":{"KmsDataKeyReusePeriodSeconds":"86401"}}"#, "InvalidAttributeValue", 400, ATTRS),
    ok("SQS-CQ-35", "CreateQueue", r#"{"QueueName":"r19","Attributes":{"KmsDataKeyReusePeriodSeconds":"86400"}}"#, ATTRS),
    err("SQS-CQ-36", "CreateQueue", r#"{"QueueName":"r20","Attributes":{"SqsManagedSseEnabled":"maybe"}}"#, "InvalidAttributeValue", 400, ATTRS),
    err("SQS-CQ-37", "CreateQueue", r#"{"QueueName":"r21","Attributes":{"Policy":"not json"}}"#, "InvalidAttributeValue", 400, "API_CreateQueue: Policy ('A valid Amazon Web Services policy')"),
    // --- CreateQueue: names that do not exist, or not for this kind of queue ---
    err("SQS-CQ-38", "CreateQueue", r#"{"QueueName":"r22","Attributes":{"Bogus":"1"}}"#, "InvalidAttributeName", 400, IAN),
    err("SQS-CQ-39", "CreateQueue", r#"{"QueueName":"r23","Attributes":{"ContentBasedDeduplication":"true"}}"#, "InvalidAttributeName", 400, "API_CreateQueue: 'The following attributes apply only to FIFO queues' + InvalidAttributeName"),
    err("SQS-CQ-40", "CreateQueue", r#"{"QueueName":"r24","Attributes":{"DeduplicationScope":"queue"}}"#, "InvalidAttributeName", 400, "API_CreateQueue: 'The following attributes apply only to high throughput for FIFO queues'"),
    err("SQS-CQ-41", "CreateQueue", r#"{"QueueName":"r25","Attributes":{"FifoThroughputLimit":"perQueue"}}"#, "InvalidAttributeName", 400, "API_CreateQueue: 'The following attributes apply only to high throughput for FIFO queues'"),
    err("SQS-CQ-42", "CreateQueue", r#"{"QueueName":"r26.fifo","Attributes":{"FifoQueue":"true","DeduplicationScope":"topic"}}"#, "InvalidAttributeValue", 400, "API_CreateQueue: DeduplicationScope ('Valid values are messageGroup and queue')"),
    err("SQS-CQ-43", "CreateQueue", r#"{"QueueName":"r27.fifo","Attributes":{"FifoQueue":"true","FifoThroughputLimit":"perTopic"}}"#, "InvalidAttributeValue", 400, "API_CreateQueue: FifoThroughputLimit ('Valid values are perQueue and perMessageGroupId')"),
    err("SQS-CQ-44", "CreateQueue", r#"{"QueueName":"r28.fifo","Attributes":{"FifoQueue":"true","ContentBasedDeduplication":"yes"}}"#, "InvalidAttributeValue", 400, "API_CreateQueue: ContentBasedDeduplication (true or false)"),
    ok("SQS-CQ-45", "CreateQueue", r#"{"QueueName":"r29.fifo","Attributes":{"FifoQueue":"true","ContentBasedDeduplication":"true","DeduplicationScope":"messageGroup","FifoThroughputLimit":"perMessageGroupId"}}"#, "API_CreateQueue: high throughput for FIFO queues"),
    // --- CreateQueue: RedrivePolicy ---
    err("SQS-CQ-46", "CreateQueue", r#"{"QueueName":"r30","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"{dlq_arn}\",\"maxReceiveCount\":0}"}}"#, "InvalidParameterValueException", 400, REDRIVE),
    err("SQS-CQ-47", "CreateQueue", r#"{"QueueName":"r31","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"{dlq_arn}\",\"maxReceiveCount\":1001}"}}"#, "InvalidParameterValueException", 400, REDRIVE),
    ok("SQS-CQ-48", "CreateQueue", r#"{"QueueName":"r32","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"{dlq_arn}\",\"maxReceiveCount\":1000}"}}"#, REDRIVE),
    err("SQS-CQ-49", "CreateQueue", r#"{"QueueName":"r33","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"{fdlq_arn}\",\"maxReceiveCount\":3}"}}"#, "InvalidParameterValueException", 400, REDRIVE),
    err("SQS-CQ-50", "CreateQueue", r#"{"QueueName":"r34.fifo","Attributes":{"FifoQueue":"true","RedrivePolicy":"{\"deadLetterTargetArn\":\"{dlq_arn}\",\"maxReceiveCount\":3}"}}"#, "InvalidParameterValueException", 400, REDRIVE),
    err("SQS-CQ-51", "CreateQueue", r#"{"QueueName":"r35","Attributes":{"RedrivePolicy":"not json"}}"#, "InvalidParameterValueException", 400, REDRIVE),
    err("SQS-CQ-52", "CreateQueue", r#"{"QueueName":"r36","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"{gone_arn}\",\"maxReceiveCount\":3}"}}"#, "QueueDoesNotExist", 400, "choice: a RedrivePolicy naming no queue is NonExistentQueue"),
    err("SQS-CQ-53", "CreateQueue", r#"{"QueueName":"r37","Attributes":{"RedriveAllowPolicy":"{\"redrivePermission\":\"byQueue\"}"}}"#, "InvalidParameterValueException", 400, "API_SetQueueAttributes: RedriveAllowPolicy (sourceQueueArns with byQueue, up to 10)"),
    // --- CreateQueue of an existing name ---
    ok("SQS-CQ-54", "CreateQueue", r#"{"QueueName":"std"}"#, "API_CreateQueue: 'the exact same names and values … will return the URL of the existing queue'"),
    err("SQS-CQ-55", "CreateQueue", r#"{"QueueName":"std","Attributes":{"VisibilityTimeout":"31"}}"#, "QueueNameExists", 400, "botocore sqs: QueueNameExists ('returns this error only if the request includes attributes whose values differ')"),
    // --- CreateQueue: tags ---
    err("SQS-CQ-56", "CreateQueue", r#"{"QueueName":"t1","tags":{"{rep:k:129}":"v"}}"#, "InvalidParameterValueException", 400, TAGS),
    err("SQS-CQ-57", "CreateQueue", r#"{"QueueName":"t2","tags":{"aws:owner":"v"}}"#, "InvalidParameterValueException", 400, TAGS),

    // --- GetQueueUrl / DeleteQueue / ListQueues ---
    err("SQS-GU-01", "GetQueueUrl", r#"{}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-GU-02", "GetQueueUrl", r#"{"QueueName":"nosuchqueue"}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),
    ok("SQS-GU-03", "GetQueueUrl", r#"{"QueueName":"std"}"#, "API_GetQueueUrl"),
    err("SQS-GU-04", "GetQueueUrl", r#"{"QueueName":"std","QueueOwnerAWSAccountId":"123456789012"}"#, "QueueDoesNotExist", 400, "API_GetQueueUrl: QueueOwnerAWSAccountId (another account's queue is not served here)"),
    err("SQS-GU-05", "GetQueueUrl", r#"{"QueueName":"a.b"}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),
    err("SQS-DQ-01", "DeleteQueue", r#"{}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-DQ-02", "DeleteQueue", r#"{"QueueUrl":"{gone}"}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),
    err("SQS-DQ-03", "DeleteQueue", r#"{"QueueUrl":"{foreign}"}"#, "QueueDoesNotExist", 400, "contract: another account's URL is QueueDoesNotExist"),
    err("SQS-LQ-01", "ListQueues", r#"{"MaxResults":0}"#, "InvalidParameterValueException", 400, "API_ListQueues: MaxResults ('Value range is 1 to 1000')"),
    err("SQS-LQ-02", "ListQueues", r#"{"MaxResults":1001}"#, "InvalidParameterValueException", 400, "API_ListQueues: MaxResults ('Value range is 1 to 1000')"),
    ok("SQS-LQ-03", "ListQueues", r#"{"MaxResults":1000}"#, "API_ListQueues: MaxResults"),
    err("SQS-LQ-04", "ListQueues", r#"{"NextToken":"!!not-a-token!!"}"#, "InvalidParameterValueException", 400, "choice: an undecodable NextToken is InvalidParameterValue"),

    // --- GetQueueAttributes ---
    err("SQS-GA-01", "GetQueueAttributes", r#"{"QueueUrl":"{std}","AttributeNames":["Bogus"]}"#, "InvalidAttributeName", 400, "botocore sqs: GetQueueAttributes errors InvalidAttributeName"),
    ok("SQS-GA-02", "GetQueueAttributes", r#"{"QueueUrl":"{std}","AttributeNames":["All"]}"#, "API_GetQueueAttributes: AttributeNames All"),
    err("SQS-GA-03", "GetQueueAttributes", r#"{"QueueUrl":"{gone}","AttributeNames":["All"]}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),
    err("SQS-GA-04", "GetQueueAttributes", r#"{}"#, "MissingRequiredParameterException", 400, MISSING),

    // --- SetQueueAttributes ---
    err("SQS-SA-01", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}"}"#, "MissingRequiredParameterException", 400, MISSING),
    ok("SQS-SA-02", "SetQueueAttributes", r#"{"QueueUrl":"{fifo}","Attributes":{"FifoQueue":"true"}}"#, "recorded against SQS (LocalStack test_set_unsupported_attribute_fifo): a FIFO queue told it is one"),
    err("SQS-SA-02b", "SetQueueAttributes", r#"{"QueueUrl":"{fifo}","Attributes":{"FifoQueue":"false"}}"#, "InvalidAttributeValue", 400, "recorded against SQS (LocalStack test_set_unsupported_attribute_fifo): 'Modifying queue type is not supported.'"),
    err("SQS-SA-03", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"QueueArn":"x"}}"#, "InvalidAttributeName", 400, "API_SetQueueAttributes: Attributes (QueueArn is read-only)"),
    err("SQS-SA-04", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"ApproximateNumberOfMessages":"1"}}"#, "InvalidAttributeName", 400, "API_SetQueueAttributes: Attributes (computed attributes are read-only)"),
    err("SQS-SA-05", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"Bogus":"1"}}"#, "InvalidAttributeName", 400, IAN),
    err("SQS-SA-06", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"ContentBasedDeduplication":"true"}}"#, "InvalidAttributeName", 400, "API_SetQueueAttributes: 'The following attribute applies only to FIFO queues'"),
    err("SQS-SA-07", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"DelaySeconds":"901"}}"#, "InvalidAttributeValue", 400, ATTRS),
    err("SQS-SA-08", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"VisibilityTimeout":"43201"}}"#, "InvalidAttributeValue", 400, ATTRS),
    ok("SQS-SA-09", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"VisibilityTimeout":"0","DelaySeconds":"0","ReceiveMessageWaitTimeSeconds":"0"}}"#, ATTRS),
    err("SQS-SA-10", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"MaximumMessageSize":"2000000"}}"#, "InvalidAttributeValue", 400, ATTRS),
    ok("SQS-SA-11", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"{scratch_arn}\",\"maxReceiveCount\":3}"}}"#, "recorded against SQS (LocalStack test_set_empty_redrive_policy): a queue may be its own dead-letter queue"),
    err("SQS-SA-12", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"{fdlq_arn}\",\"maxReceiveCount\":3}"}}"#, "InvalidParameterValueException", 400, REDRIVE),
    err("SQS-SA-13", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"{dlq_arn}\"}"}}"#, "InvalidParameterValueException", 400, REDRIVE),
    err("SQS-SA-14", "SetQueueAttributes", r#"{"QueueUrl":"{scratch}","Attributes":{"queen.partitions":"4"}}"#, "InvalidAttributeName", 400, "contract: queen.partitions is fixed at create"),
    err("SQS-SA-15", "SetQueueAttributes", r#"{"QueueUrl":"{gone}","Attributes":{"DelaySeconds":"1"}}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),

    // --- PurgeQueue ---
    err("SQS-PQ-01", "PurgeQueue", r#"{"QueueUrl":"{gone}"}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),
    ok("SQS-PQ-02", "PurgeQueue", r#"{"QueueUrl":"{purgeme}"}"#, "API_PurgeQueue"),
    err("SQS-PQ-03", "PurgeQueue", r#"{"QueueUrl":"{purgeme}"}"#, "PurgeQueueInProgress", 403, "botocore sqs: PurgeQueueInProgress ('within the last 60 seconds')"),

    // --- Tags ---
    err("SQS-TQ-01", "TagQueue", r#"{"QueueUrl":"{std}"}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-TQ-02", "TagQueue", r#"{"QueueUrl":"{tags50}","Tags":{"one-more":"v"}}"#, "InvalidParameterValueException", 400, TAGS),
    ok("SQS-TQ-03", "TagQueue", r#"{"QueueUrl":"{tags50}","Tags":{"k0":"replaced"}}"#, "API_TagQueue: 'A new tag with a key identical to that of an existing tag overwrites the existing tag'"),
    err("SQS-TQ-04", "TagQueue", r#"{"QueueUrl":"{std}","Tags":{"{rep:k:129}":"v"}}"#, "InvalidParameterValueException", 400, TAGS),
    ok("SQS-TQ-05", "TagQueue", r#"{"QueueUrl":"{std}","Tags":{"{rep:k:128}":"{rep:v:256}"}}"#, TAGS),
    err("SQS-TQ-06", "TagQueue", r#"{"QueueUrl":"{std}","Tags":{"k":"{rep:v:257}"}}"#, "InvalidParameterValueException", 400, TAGS),
    err("SQS-TQ-07", "TagQueue", r#"{"QueueUrl":"{std}","Tags":{"":"v"}}"#, "InvalidParameterValueException", 400, TAGS),
    err("SQS-TQ-08", "TagQueue", r#"{"QueueUrl":"{std}","Tags":{"a*b":"v"}}"#, "InvalidParameterValueException", 400, TAGS),
    err("SQS-TQ-09", "TagQueue", r#"{"QueueUrl":"{std}","Tags":{"AWS:team":"v"}}"#, "InvalidParameterValueException", 400, TAGS),
    ok("SQS-TQ-10", "TagQueue", r#"{"QueueUrl":"{std}","Tags":{"team:a/b=c+d-e@f_g.h":"x y"}}"#, TAGS),
    err("SQS-TQ-11", "TagQueue", r#"{"QueueUrl":"{gone}","Tags":{"k":"v"}}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),
    err("SQS-UT-01", "UntagQueue", r#"{"QueueUrl":"{std}"}"#, "MissingRequiredParameterException", 400, MISSING),
    ok("SQS-UT-02", "UntagQueue", r#"{"QueueUrl":"{std}","TagKeys":["absent"]}"#, "API_UntagQueue"),
    err("SQS-UT-03", "UntagQueue", r#"{"QueueUrl":"{gone}","TagKeys":["k"]}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),
    err("SQS-LT-01", "ListQueueTags", r#"{"QueueUrl":"{gone}"}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),

    // --- AddPermission / RemovePermission ---
    err("SQS-AP-01", "AddPermission", r#"{"QueueUrl":"{std}","AWSAccountIds":["111122223333"],"Actions":["SendMessage"]}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-AP-02", "AddPermission", r#"{"QueueUrl":"{std}","Label":"{rep:l:81}","AWSAccountIds":["111122223333"],"Actions":["SendMessage"]}"#, "InvalidParameterValueException", 400, "API_AddPermission: Label ('Maximum 80 characters … alphanumeric characters, hyphens and underscores')"),
    err("SQS-AP-03", "AddPermission", r#"{"QueueUrl":"{std}","Label":"a b","AWSAccountIds":["111122223333"],"Actions":["SendMessage"]}"#, "InvalidParameterValueException", 400, "API_AddPermission: Label"),
    err("SQS-AP-04", "AddPermission", r#"{"QueueUrl":"{std}","Label":"l1","Actions":["SendMessage"]}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-AP-05", "AddPermission", r#"{"QueueUrl":"{std}","Label":"l1","AWSAccountIds":["111122223333"]}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-AP-06", "AddPermission", r#"{"QueueUrl":"{std}","Label":"l1","AWSAccountIds":["111122223333"],"Actions":["Nope"]}"#, "InvalidParameterValueException", 400, "API_AddPermission: Actions ('the name of any action or *')"),
    ok("SQS-AP-07", "AddPermission", r#"{"QueueUrl":"{std}","Label":"{rep:l:80}","AWSAccountIds":["111122223333"],"Actions":["SendMessage","*"]}"#, "API_AddPermission"),
    err("SQS-AP-08", "AddPermission", r#"{"QueueUrl":"{std}","Label":"{rep:l:80}","AWSAccountIds":["111122223333"],"Actions":["SendMessage"]}"#, "InvalidParameterValueException", 400, "choice: a label already in use is InvalidParameterValue"),
    err("SQS-AP-09", "AddPermission", r#"{"QueueUrl":"{gone}","Label":"l1","AWSAccountIds":["111122223333"],"Actions":["SendMessage"]}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),
    err("SQS-RP-01", "RemovePermission", r#"{"QueueUrl":"{std}"}"#, "MissingRequiredParameterException", 400, MISSING),
    err("SQS-RP-02", "RemovePermission", r#"{"QueueUrl":"{std}","Label":"neverset"}"#, "InvalidParameterValueException", 400, "choice: an unknown label is InvalidParameterValue"),

    // --- ListDeadLetterSourceQueues ---
    err("SQS-DS-01", "ListDeadLetterSourceQueues", r#"{"QueueUrl":"{dlq}","MaxResults":0}"#, "InvalidParameterValueException", 400, "API_ListDeadLetterSourceQueues: MaxResults ('Value range is 1 to 1000')"),
    err("SQS-DS-02", "ListDeadLetterSourceQueues", r#"{"QueueUrl":"{dlq}","MaxResults":1001}"#, "InvalidParameterValueException", 400, "API_ListDeadLetterSourceQueues: MaxResults"),
    ok("SQS-DS-03", "ListDeadLetterSourceQueues", r#"{"QueueUrl":"{dlq}","MaxResults":1000}"#, "API_ListDeadLetterSourceQueues: MaxResults"),
    err("SQS-DS-04", "ListDeadLetterSourceQueues", r#"{"QueueUrl":"{gone}"}"#, "QueueDoesNotExist", 400, UNKNOWN_Q),

    // --- Common errors ---
    err("SQS-CE-01", "Nope", r#"{}"#, "InvalidAction", 400, "CommonErrors: InvalidAction"),
    err("SQS-CE-02", "sendmessage", r#"{"QueueUrl":"{std}","MessageBody":"x"}"#, "InvalidAction", 400, "contract: action names are case sensitive"),
];
