package queensqs.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

class DeadLetterTest extends ClientTest {

  @Test
  void aMessageReceivedPastMaxReceiveCountMovesToTheDeadLetterQueue() throws Exception {
    String dlq = createQueue(Compat.unique("java-dlq"), Map.of());
    String dlqArn = Compat.queueArn(sqs, dlq);
    String policy = "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":1}";
    String src =
        createQueue(Compat.unique("java-src"), Map.of(QueueAttributeName.REDRIVE_POLICY, policy));
    Map<String, MessageAttributeValue> attrs =
        Map.of(
            "kind", Compat.stringAttr("String", "poison"),
            "blob", Compat.binaryAttr("Binary", new byte[] {9, 8, 7}));
    sqs.sendMessage(r -> r.queueUrl(src).messageBody("poison ☠").messageAttributes(attrs));

    // Received once and not deleted, hidden for 1 s.
    List<Message> once =
        sqs.receiveMessage(r -> r.queueUrl(src).waitTimeSeconds(5).visibilityTimeout(1)).messages();
    assertEquals(1, once.size());
    assertEquals("poison ☠", once.get(0).body());
    Thread.sleep(1200);

    // The next receive finds it past maxReceiveCount 1: moved, not delivered.
    assertTrue(
        sqs.receiveMessage(r -> r.queueUrl(src).waitTimeSeconds(1).visibilityTimeout(1))
            .messages()
            .isEmpty(),
        "the source no longer delivers it");

    List<Message> dead =
        Compat.receiveUntil(
            sqs,
            dlq,
            1,
            Duration.ofSeconds(10),
            true,
            r ->
                r.messageAttributeNames("All")
                    .messageSystemAttributeNames(MessageSystemAttributeName.ALL));
    assertEquals(1, dead.size(), "the message is in the dead-letter queue");
    Message m = dead.get(0);
    assertEquals("poison ☠", m.body());
    assertEquals(Compat.md5Hex("poison ☠"), m.md5OfBody());
    assertEquals("poison", m.messageAttributes().get("kind").stringValue());
    assertEquals(3, m.messageAttributes().get("blob").binaryValue().asByteArray().length);
    // The dead-lettered copy carries its receive count on (1 delivery before the move).
    int count =
        Integer.parseInt(m.attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT));
    assertTrue(count >= 2, () -> "ApproximateReceiveCount carried into the DLQ: " + m.attributes());

    assertEquals(List.of(src), sqs.listDeadLetterSourceQueues(r -> r.queueUrl(dlq)).queueUrls());
    assertTrue(sqs.receiveMessage(r -> r.queueUrl(src).waitTimeSeconds(0)).messages().isEmpty());
  }
}
