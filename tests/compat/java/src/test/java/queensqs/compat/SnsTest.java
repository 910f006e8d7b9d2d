package queensqs.compat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.protocols.jsoncore.JsonNode;
import software.amazon.awssdk.services.sns.model.InvalidParameterException;
import software.amazon.awssdk.services.sns.model.MessageAttributeValue;
import software.amazon.awssdk.services.sns.model.NotFoundException;
import software.amazon.awssdk.services.sns.model.PublishBatchRequestEntry;
import software.amazon.awssdk.services.sns.model.PublishBatchResponse;
import software.amazon.awssdk.services.sns.model.PublishResponse;
import software.amazon.awssdk.services.sns.model.Subscription;
import software.amazon.awssdk.services.sqs.model.Message;

class SnsTest extends ClientTest {

  static final byte[] BLOB = {0, 1, (byte) 0xfe, (byte) 0xff};

  static Map<String, MessageAttributeValue> publishAttributes(String color) {
    return Map.of(
        "color", MessageAttributeValue.builder().dataType("String").stringValue(color).build(),
        "count", MessageAttributeValue.builder().dataType("Number").stringValue("7").build(),
        "blob",
            MessageAttributeValue.builder()
                .dataType("Binary")
                .binaryValue(SdkBytes.fromByteArray(BLOB))
                .build());
  }

  String subscribeQueue(String topicArn, String queueUrl, Map<String, String> attributes) {
    String queueArn = Compat.queueArn(sqs, queueUrl);
    String subArn =
        sns.subscribe(
                r ->
                    r.topicArn(topicArn)
                        .protocol("sqs")
                        .endpoint(queueArn)
                        .attributes(attributes)
                        .returnSubscriptionArn(true))
            .subscriptionArn();
    assertNotNull(subArn);
    assertTrue(
        subArn.startsWith(topicArn + ":"), () -> "a subscription ARN under its topic: " + subArn);
    return subArn;
  }

  static Message receiveOne(String url) {
    List<Message> got =
        sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5).messageAttributeNames("All"))
            .messages();
    assertEquals(1, got.size(), "one notification delivered");
    Message m = got.get(0);
    sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(m.receiptHandle()));
    return m;
  }

  @Test
  void publishToAnSqsSubscriptionDeliversTheNotificationEnvelope() {
    String name = Compat.unique("java-topic");
    String topicArn = createTopic(name);
    assertTrue(
        topicArn.startsWith("arn:aws:sns:us-east-1:") && topicArn.endsWith(":" + name), topicArn);
    assertEquals(
        topicArn, sns.createTopic(r -> r.name(name)).topicArn(), "CreateTopic is idempotent");
    assertTrue(
        sns.listTopicsPaginator(r -> {}).topics().stream()
            .anyMatch(t -> t.topicArn().equals(topicArn)),
        "ListTopics lists it");

    String url = createQueue(Compat.unique("java-envelope"), Map.of());
    String subArn = subscribeQueue(topicArn, url, Map.of());
    assertEquals(
        "false",
        sns.getSubscriptionAttributes(r -> r.subscriptionArn(subArn))
            .attributes()
            .getOrDefault("RawMessageDelivery", "false"));

    String text = "hello from SNS ✓ {\"not\":\"parsed\"}";
    PublishResponse pub =
        sns.publish(
            r ->
                r.topicArn(topicArn)
                    .subject("a subject")
                    .message(text)
                    .messageAttributes(publishAttributes("blue")));
    assertNotNull(pub.messageId());

    Message m = receiveOne(url);
    Map<String, JsonNode> env = JsonNode.parser().parse(m.body()).asObject();
    assertEquals("Notification", env.get("Type").asString());
    assertEquals(pub.messageId(), env.get("MessageId").asString());
    assertEquals(topicArn, env.get("TopicArn").asString());
    assertEquals("a subject", env.get("Subject").asString());
    assertEquals(text, env.get("Message").asString());
    assertNotNull(env.get("Timestamp"), "Timestamp in the envelope");
    assertTrue(
        env.get("Timestamp")
            .asString()
            .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z"),
        () -> "an ISO-8601 UTC Timestamp: " + env.get("Timestamp"));
    assertNotNull(env.get("SignatureVersion"), "SignatureVersion in the envelope");

    Map<String, JsonNode> attrs = env.get("MessageAttributes").asObject();
    assertEquals(Set.of("color", "count", "blob"), attrs.keySet());
    assertEquals("String", attrs.get("color").asObject().get("Type").asString());
    assertEquals("blue", attrs.get("color").asObject().get("Value").asString());
    assertEquals("Number", attrs.get("count").asObject().get("Type").asString());
    assertEquals("7", attrs.get("count").asObject().get("Value").asString());
    assertEquals("Binary", attrs.get("blob").asObject().get("Type").asString());
    assertArrayEquals(
        BLOB, Base64.getDecoder().decode(attrs.get("blob").asObject().get("Value").asString()));
    // Not raw: the SNS attributes ride inside the envelope, not as SQS message attributes.
    assertTrue(m.messageAttributes().isEmpty(), () -> "" + m.messageAttributes());

    Map<String, String> topicAttrs = sns.getTopicAttributes(r -> r.topicArn(topicArn)).attributes();
    assertEquals(topicArn, topicAttrs.get("TopicArn"));
    assertEquals("1", topicAttrs.get("SubscriptionsConfirmed"));

    // MessageStructure=json: an SQS subscriber gets the "sqs" entry.
    sns.publish(
        r ->
            r.topicArn(topicArn)
                .messageStructure("json")
                .message("{\"default\":\"for everyone\",\"sqs\":\"for queues\"}"));
    assertEquals(
        "for queues",
        JsonNode.parser().parse(receiveOne(url).body()).asObject().get("Message").asString());

    // RawMessageDelivery switched on later with SetSubscriptionAttributes.
    sns.setSubscriptionAttributes(
        r -> r.subscriptionArn(subArn).attributeName("RawMessageDelivery").attributeValue("true"));
    sns.publish(r -> r.topicArn(topicArn).message("now raw"));
    assertEquals("now raw", receiveOne(url).body());

    List<Subscription> subs =
        sns.listSubscriptionsByTopic(r -> r.topicArn(topicArn)).subscriptions();
    assertEquals(1, subs.size());
    assertEquals(subArn, subs.get(0).subscriptionArn());
    assertEquals("sqs", subs.get(0).protocol());
    assertEquals(Compat.queueArn(sqs, url), subs.get(0).endpoint());
    assertEquals(topicArn, subs.get(0).topicArn());
  }

  @Test
  void rawMessageDeliveryAndPublishBatchAndUnsubscribe() {
    String topicArn = createTopic(Compat.unique("java-raw-topic"));
    String raw = createQueue(Compat.unique("java-raw"), Map.of());
    String wrapped = createQueue(Compat.unique("java-wrapped"), Map.of());
    String rawSub = subscribeQueue(topicArn, raw, Map.of("RawMessageDelivery", "true"));
    String wrappedSub = subscribeQueue(topicArn, wrapped, Map.of());
    assertEquals(
        "true",
        sns.getSubscriptionAttributes(r -> r.subscriptionArn(rawSub))
            .attributes()
            .get("RawMessageDelivery"));

    List<Subscription> subs =
        sns.listSubscriptionsByTopic(r -> r.topicArn(topicArn)).subscriptions();
    assertEquals(
        Set.of(rawSub, wrappedSub),
        subs.stream().map(Subscription::subscriptionArn).collect(Collectors.toSet()));
    assertEquals(
        Set.of(Compat.queueArn(sqs, raw), Compat.queueArn(sqs, wrapped)),
        subs.stream().map(Subscription::endpoint).collect(Collectors.toSet()));

    // Raw: the body is the message itself, the SNS attributes are SQS message attributes
    // (whose MD5 the SDK checks on receive).
    sns.publish(
        r ->
            r.topicArn(topicArn).message("raw ✓ body").messageAttributes(publishAttributes("red")));
    Message m = receiveOne(raw);
    assertEquals("raw ✓ body", m.body());
    assertEquals("String", m.messageAttributes().get("color").dataType());
    assertEquals("red", m.messageAttributes().get("color").stringValue());
    assertEquals("Number", m.messageAttributes().get("count").dataType());
    assertEquals("7", m.messageAttributes().get("count").stringValue());
    assertEquals("Binary", m.messageAttributes().get("blob").dataType());
    assertArrayEquals(BLOB, m.messageAttributes().get("blob").binaryValue().asByteArray());
    Message w = receiveOne(wrapped);
    assertEquals(
        "raw ✓ body", JsonNode.parser().parse(w.body()).asObject().get("Message").asString());

    // PublishBatch: two entries, both delivered.
    PublishBatchResponse batch =
        sns.publishBatch(
            r ->
                r.topicArn(topicArn)
                    .publishBatchRequestEntries(
                        PublishBatchRequestEntry.builder().id("one").message("batch 1").build(),
                        PublishBatchRequestEntry.builder().id("two").message("batch 2").build()));
    assertTrue(batch.failed().isEmpty(), () -> "failed: " + batch.failed());
    assertEquals(
        Set.of("one", "two"),
        batch.successful().stream().map(e -> e.id()).collect(Collectors.toSet()));
    assertEquals(
        Set.of("batch 1", "batch 2"),
        Compat.receiveUntil(sqs, raw, 2, Duration.ofSeconds(10), true, r -> {}).stream()
            .map(Message::body)
            .collect(Collectors.toSet()));
    assertEquals(
        2, Compat.receiveUntil(sqs, wrapped, 2, Duration.ofSeconds(10), true, r -> {}).size());

    // Unsubscribed: the wrapped queue gets nothing more.
    sns.unsubscribe(r -> r.subscriptionArn(wrappedSub));
    assertEquals(
        List.of(rawSub),
        sns.listSubscriptionsByTopic(r -> r.topicArn(topicArn)).subscriptions().stream()
            .map(Subscription::subscriptionArn)
            .toList());
    sns.publish(r -> r.topicArn(topicArn).message("after unsubscribe"));
    assertEquals("after unsubscribe", receiveOne(raw).body());
    assertTrue(
        sqs.receiveMessage(r -> r.queueUrl(wrapped).waitTimeSeconds(1)).messages().isEmpty());
  }

  @Test
  void aFilterPolicyDeliversOnlyMatchingMessages() {
    String topicArn = createTopic(Compat.unique("java-filter-topic"));
    String url = createQueue(Compat.unique("java-filtered"), Map.of());
    subscribeQueue(
        topicArn,
        url,
        Map.of(
            "RawMessageDelivery",
            "true",
            "FilterPolicy",
            "{\"color\":[\"red\"],\"count\":[{\"numeric\":[\">\",5]}]}"));
    sns.publish(
        r -> r.topicArn(topicArn).message("blue one").messageAttributes(publishAttributes("blue")));
    sns.publish(r -> r.topicArn(topicArn).message("no attributes"));
    sns.publish(
        r -> r.topicArn(topicArn).message("red one").messageAttributes(publishAttributes("red")));
    assertEquals("red one", receiveOne(url).body());
    assertTrue(
        sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(1)).messages().isEmpty(),
        "the non-matching messages were not delivered");
  }

  @Test
  void snsErrorsAreTypedExceptions() {
    String missing = "arn:aws:sns:us-east-1:000000000000:" + Compat.unique("java-missing");
    NotFoundException notFound =
        assertThrows(
            NotFoundException.class, () -> sns.publish(r -> r.topicArn(missing).message("x")));
    assertEquals(404, notFound.statusCode());
    assertEquals("NotFound", notFound.awsErrorDetails().errorCode());

    assertThrows(
        InvalidParameterException.class, () -> sns.createTopic(r -> r.name("not a valid name!")));

    String topicArn = createTopic(Compat.unique("java-err-topic"));
    InvalidParameterException badProtocol =
        assertThrows(
            InvalidParameterException.class,
            () ->
                sns.subscribe(r -> r.topicArn(topicArn).protocol("carrier-pigeon").endpoint("x")));
    assertEquals(400, badProtocol.statusCode());

    // A deleted topic is NotFound to Publish.
    sns.deleteTopic(r -> r.topicArn(topicArn));
    assertThrows(
        NotFoundException.class, () -> sns.publish(r -> r.topicArn(topicArn).message("x")));
  }
}
