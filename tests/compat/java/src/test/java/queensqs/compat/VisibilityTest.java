package queensqs.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchResponse;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

class VisibilityTest extends ClientTest {

  static Message receiveOne(String url, int waitSeconds, Integer visibility) {
    List<Message> got =
        sqs.receiveMessage(
                r -> {
                  r.queueUrl(url)
                      .waitTimeSeconds(waitSeconds)
                      .messageSystemAttributeNames(MessageSystemAttributeName.ALL);
                  if (visibility != null) {
                    r.visibilityTimeout(visibility);
                  }
                })
            .messages();
    assertEquals(1, got.size(), "one message received");
    return got.get(0);
  }

  static String receiveCount(Message m) {
    return m.attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT);
  }

  @Test
  void changeVisibilityToZeroThenAOneSecondVisibilityTimeout() {
    String url = createQueue(Compat.unique("java-vis"), Map.of()); // default visibility: 30 s
    String id = sqs.sendMessage(r -> r.queueUrl(url).messageBody("look again")).messageId();

    Message first = receiveOne(url, 5, null);
    assertEquals(id, first.messageId());
    assertEquals("1", receiveCount(first));
    assertTrue(
        sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(0)).messages().isEmpty(),
        "in flight for the queue's 30 s: not delivered again");

    // ChangeMessageVisibility to 0: receivable at once, counted a second time.
    sqs.changeMessageVisibility(
        r -> r.queueUrl(url).receiptHandle(first.receiptHandle()).visibilityTimeout(0));
    Message second = receiveOne(url, 5, 1); // this time hidden for 1 s only
    long hiddenAt = System.nanoTime();
    assertEquals(id, second.messageId());
    assertEquals("2", receiveCount(second));
    assertTrue(
        sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(0)).messages().isEmpty(),
        "hidden for the receive's VisibilityTimeout of 1 s");

    // A long poll started now answers it once the second has passed, well inside its 5 s.
    Message third = receiveOne(url, 5, null);
    long hiddenFor = Duration.ofNanos(System.nanoTime() - hiddenAt).toMillis();
    assertEquals(id, third.messageId());
    assertEquals("3", receiveCount(third));
    assertTrue(
        hiddenFor >= 900 && hiddenFor < 4000,
        () -> "hidden for 1 s, then the waiting long poll took it: " + hiddenFor + " ms");

    sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(third.receiptHandle()));
    assertTrue(sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(1)).messages().isEmpty());
  }

  @Test
  void changeMessageVisibilityBatchReleasesEveryEntry() {
    String url = createQueue(Compat.unique("java-vis-batch"), Map.of());
    for (int i = 0; i < 3; i++) {
      String body = "m" + i;
      sqs.sendMessage(r -> r.queueUrl(url).messageBody(body));
    }
    List<Message> got = Compat.receiveUntil(sqs, url, 3, Duration.ofSeconds(15), false, r -> {});
    assertEquals(3, got.size());

    List<ChangeMessageVisibilityBatchRequestEntry> entries =
        got.stream()
            .map(
                m ->
                    ChangeMessageVisibilityBatchRequestEntry.builder()
                        .id("c" + m.body())
                        .receiptHandle(m.receiptHandle())
                        .visibilityTimeout(0)
                        .build())
            .toList();
    ChangeMessageVisibilityBatchResponse res =
        sqs.changeMessageVisibilityBatch(r -> r.queueUrl(url).entries(entries));
    assertTrue(res.failed().isEmpty(), () -> "failed: " + res.failed());
    assertEquals(
        Set.of("cm0", "cm1", "cm2"),
        res.successful().stream().map(e -> e.id()).collect(Collectors.toSet()));

    List<Message> again =
        Compat.receiveUntil(
            sqs,
            url,
            3,
            Duration.ofSeconds(15),
            true,
            r ->
                r.messageSystemAttributeNames(
                    MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT));
    assertEquals(
        Set.of("m0", "m1", "m2"), again.stream().map(Message::body).collect(Collectors.toSet()));
    for (Message m : again) {
      assertEquals("2", receiveCount(m), m.body());
    }
  }
}
