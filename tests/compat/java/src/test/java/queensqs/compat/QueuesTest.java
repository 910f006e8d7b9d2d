package queensqs.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.protocols.jsoncore.JsonNode;
import software.amazon.awssdk.services.sqs.model.CreateQueueRequest;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.PurgeQueueInProgressException;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

class QueuesTest extends ClientTest {

  @Test
  void createWithAttributesAndTagsThenGetQueueUrl() {
    String name = Compat.unique("java-attrs");
    String url =
        sqs.createQueue(
                CreateQueueRequest.builder()
                    .queueName(name)
                    .attributes(
                        Map.of(
                            QueueAttributeName.VISIBILITY_TIMEOUT, "45",
                            QueueAttributeName.MESSAGE_RETENTION_PERIOD, "3600",
                            QueueAttributeName.RECEIVE_MESSAGE_WAIT_TIME_SECONDS, "2"))
                    .tags(Map.of("team", "queen", "env", "test"))
                    .build())
            .queueUrl();
    try {
      assertTrue(url.endsWith("/" + name), url);
      assertEquals(url, sqs.getQueueUrl(r -> r.queueName(name)).queueUrl());
      // CreateQueue again with the same attributes is idempotent: the same URL.
      assertEquals(
          url,
          sqs.createQueue(
                  r ->
                      r.queueName(name)
                          .attributes(
                              Map.of(
                                  QueueAttributeName.VISIBILITY_TIMEOUT, "45",
                                  QueueAttributeName.MESSAGE_RETENTION_PERIOD, "3600",
                                  QueueAttributeName.RECEIVE_MESSAGE_WAIT_TIME_SECONDS, "2")))
              .queueUrl());

      Map<QueueAttributeName, String> attrs =
          sqs.getQueueAttributes(r -> r.queueUrl(url).attributeNames(QueueAttributeName.ALL))
              .attributes();
      assertEquals("45", attrs.get(QueueAttributeName.VISIBILITY_TIMEOUT));
      assertEquals("3600", attrs.get(QueueAttributeName.MESSAGE_RETENTION_PERIOD));
      assertEquals("2", attrs.get(QueueAttributeName.RECEIVE_MESSAGE_WAIT_TIME_SECONDS));
      assertEquals("0", attrs.get(QueueAttributeName.DELAY_SECONDS));
      assertEquals("0", attrs.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES));
      String arn = attrs.get(QueueAttributeName.QUEUE_ARN);
      assertNotNull(arn, "QueueArn under All");
      assertTrue(arn.startsWith("arn:aws:sqs:us-east-1:") && arn.endsWith(":" + name), arn);
      assertNotNull(attrs.get(QueueAttributeName.CREATED_TIMESTAMP), "CreatedTimestamp under All");

      // Asking for one attribute answers that one only.
      Map<QueueAttributeName, String> one =
          sqs.getQueueAttributes(
                  r -> r.queueUrl(url).attributeNames(QueueAttributeName.VISIBILITY_TIMEOUT))
              .attributes();
      assertEquals(Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "45"), one);

      // Tags: those given at creation, then TagQueue and UntagQueue.
      assertEquals(
          Map.of("team", "queen", "env", "test"), sqs.listQueueTags(r -> r.queueUrl(url)).tags());
      sqs.tagQueue(r -> r.queueUrl(url).tags(Map.of("owner", "java", "env", "ci")));
      assertEquals(
          Map.of("team", "queen", "env", "ci", "owner", "java"),
          sqs.listQueueTags(r -> r.queueUrl(url)).tags());
      sqs.untagQueue(r -> r.queueUrl(url).tagKeys("env", "team"));
      assertEquals(Map.of("owner", "java"), sqs.listQueueTags(r -> r.queueUrl(url)).tags());
    } finally {
      sqs.deleteQueue(r -> r.queueUrl(url));
    }
    // Deleted: GetQueueUrl is the typed error now.
    assertThrows(QueueDoesNotExistException.class, () -> sqs.getQueueUrl(r -> r.queueName(name)));
  }

  @Test
  void setQueueAttributesIncludingARedrivePolicy() {
    String dlq = createQueue(Compat.unique("java-set-dlq"), Map.of());
    String dlqArn = Compat.queueArn(sqs, dlq);
    String url = createQueue(Compat.unique("java-set"), Map.of());

    String policy = "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":\"5\"}";
    sqs.setQueueAttributes(
        r ->
            r.queueUrl(url)
                .attributes(
                    Map.of(
                        QueueAttributeName.VISIBILITY_TIMEOUT, "10",
                        QueueAttributeName.DELAY_SECONDS, "1",
                        QueueAttributeName.MAXIMUM_MESSAGE_SIZE, "2048",
                        QueueAttributeName.REDRIVE_POLICY, policy)));
    Map<QueueAttributeName, String> attrs =
        sqs.getQueueAttributes(r -> r.queueUrl(url).attributeNames(QueueAttributeName.ALL))
            .attributes();
    assertEquals("10", attrs.get(QueueAttributeName.VISIBILITY_TIMEOUT));
    assertEquals("1", attrs.get(QueueAttributeName.DELAY_SECONDS));
    assertEquals("2048", attrs.get(QueueAttributeName.MAXIMUM_MESSAGE_SIZE));
    String redrive = attrs.get(QueueAttributeName.REDRIVE_POLICY);
    assertNotNull(redrive, "RedrivePolicy is answered as set");
    Map<String, JsonNode> parsed = JsonNode.parser().parse(redrive).asObject();
    assertEquals(dlqArn, parsed.get("deadLetterTargetArn").asString());
    JsonNode max = parsed.get("maxReceiveCount");
    assertEquals("5", max.isNumber() ? max.asNumber() : max.asString());

    // DelaySeconds is in force: a message sent now is not receivable at once, then it is.
    sqs.sendMessage(r -> r.queueUrl(url).messageBody("delayed"));
    assertTrue(
        sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(0)).messages().isEmpty(),
        "a message inside the queue's DelaySeconds is not delivered");
    List<Message> later = Compat.receiveUntil(sqs, url, 1, Duration.ofSeconds(8), true, r -> {});
    assertEquals(1, later.size(), "delivered once the delay has passed");
    assertEquals("delayed", later.get(0).body());

    // ListDeadLetterSourceQueues names the queue whose policy points at the DLQ.
    assertEquals(List.of(url), sqs.listDeadLetterSourceQueues(r -> r.queueUrl(dlq)).queueUrls());

    // Removing the policy: an empty RedrivePolicy.
    sqs.setQueueAttributes(
        r -> r.queueUrl(url).attributes(Map.of(QueueAttributeName.REDRIVE_POLICY, "")));
    String after =
        sqs.getQueueAttributes(r -> r.queueUrl(url).attributeNames(QueueAttributeName.ALL))
            .attributes()
            .get(QueueAttributeName.REDRIVE_POLICY);
    assertTrue(after == null || after.isEmpty(), () -> "RedrivePolicy removed: " + after);
  }

  @Test
  void purgeQueueEmptiesItAndASecondPurgeIsPurgeQueueInProgressException() {
    String url = createQueue(Compat.unique("java-purge"), Map.of());
    for (int i = 0; i < 3; i++) {
      String body = "p" + i;
      sqs.sendMessage(r -> r.queueUrl(url).messageBody(body));
    }
    sqs.purgeQueue(r -> r.queueUrl(url));
    assertTrue(
        sqs.receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1))
            .messages()
            .isEmpty(),
        "nothing left after PurgeQueue");
    PurgeQueueInProgressException e =
        assertThrows(
            PurgeQueueInProgressException.class, () -> sqs.purgeQueue(r -> r.queueUrl(url)));
    assertEquals(403, e.statusCode());
  }

  @Test
  void listQueuesByPrefixAndPaginated() {
    String prefix = Compat.unique("java-list");
    Set<String> mine = new TreeSet<>();
    for (String suffix : List.of("a", "b", "c")) {
      mine.add(createQueue(prefix + "-" + suffix, Map.of()));
    }
    String other = createQueue(Compat.unique("java-other"), Map.of());

    List<String> listed = sqs.listQueues(r -> r.queueNamePrefix(prefix)).queueUrls();
    assertEquals(mine, new TreeSet<>(listed), "ListQueues with a prefix lists exactly those");
    assertFalse(listed.contains(other));

    // MaxResults pages with NextToken; the SDK's paginator follows it.
    var firstPage = sqs.listQueues(r -> r.queueNamePrefix(prefix).maxResults(2));
    assertEquals(2, firstPage.queueUrls().size());
    assertNotNull(firstPage.nextToken(), "a NextToken when more remain");
    List<String> paged = new ArrayList<>();
    sqs.listQueuesPaginator(r -> r.queueNamePrefix(prefix).maxResults(1))
        .queueUrls()
        .forEach(paged::add);
    assertEquals(3, paged.size(), () -> "the paginator visits each queue once: " + paged);
    assertEquals(mine, new TreeSet<>(paged));
  }

  @Test
  void aMissingQueueIsQueueDoesNotExistException() {
    String name = Compat.unique("java-none");
    QueueDoesNotExistException e =
        assertThrows(
            QueueDoesNotExistException.class, () -> sqs.getQueueUrl(r -> r.queueName(name)));
    assertEquals(400, e.statusCode());
    // The SDK sends x-amzn-query-mode and reads the Query-era code from x-amzn-query-error,
    // as code written against the Query protocol compares it.
    assertEquals("AWS.SimpleQueueService.NonExistentQueue", e.awsErrorDetails().errorCode());
    assertNotNull(e.awsErrorDetails().errorMessage(), "the error carries a message");
    assertNotNull(e.requestId(), "the error carries a request id");
    // The same for an operation on the URL of a queue that is not there.
    String url = createQueue(Compat.unique("java-x"), Map.of());
    String missingUrl = url.substring(0, url.lastIndexOf('/') + 1) + name;
    assertThrows(
        QueueDoesNotExistException.class,
        () -> sqs.sendMessage(r -> r.queueUrl(missingUrl).messageBody("x")));
    assertThrows(
        QueueDoesNotExistException.class,
        () ->
            sqs.getQueueAttributes(
                r -> r.queueUrl(missingUrl).attributeNames(QueueAttributeName.ALL)));
  }
}
