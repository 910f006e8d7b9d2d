package queensqs.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageResponse;
import software.amazon.awssdk.services.sqs.model.SqsException;

class FifoTest extends ClientTest {

  record Sent(String group, String body, SendMessageResponse answer) {}

  @Test
  void orderWithinGroupsSequenceNumbersAndContentBasedDeduplication() {
    String name = Compat.unique("java-fifo") + ".fifo";
    String url =
        createQueue(
            name,
            Map.of(
                QueueAttributeName.FIFO_QUEUE, "true",
                QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "true"));
    Map<QueueAttributeName, String> attrs =
        sqs.getQueueAttributes(r -> r.queueUrl(url).attributeNames(QueueAttributeName.ALL))
            .attributes();
    assertEquals("true", attrs.get(QueueAttributeName.FIFO_QUEUE));
    assertEquals("true", attrs.get(QueueAttributeName.CONTENT_BASED_DEDUPLICATION));

    // Interleaved sends to two groups; no MessageDeduplicationId (the body's SHA-256 is it).
    List<Sent> sent = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      for (String group : List.of("A", "B")) {
        String body = group + i;
        SendMessageResponse out =
            sqs.sendMessage(r -> r.queueUrl(url).messageBody(body).messageGroupId(group));
        assertNotNull(out.messageId());
        assertNotNull(out.sequenceNumber(), "a FIFO send answers a SequenceNumber");
        sent.add(new Sent(group, body, out));
      }
    }
    for (String group : List.of("A", "B")) {
      BigInteger last = BigInteger.valueOf(-1);
      for (Sent s : sent) {
        if (!s.group.equals(group)) continue;
        BigInteger n = new BigInteger(s.answer.sequenceNumber());
        assertTrue(
            n.compareTo(last) > 0, () -> "SequenceNumber increases within " + group + ": " + sent);
        last = n;
      }
    }

    // The same body in the same group inside the 5-minute window: deduplicated, and answered
    // with the original's MessageId.
    SendMessageResponse dup =
        sqs.sendMessage(r -> r.queueUrl(url).messageBody("A1").messageGroupId("A"));
    assertEquals(
        sent.get(0).answer.messageId(), dup.messageId(), "a duplicate answers the original id");
    // The same body with an explicit MessageDeduplicationId is a new message.
    SendMessageResponse explicit =
        sqs.sendMessage(
            r ->
                r.queueUrl(url)
                    .messageBody("A1")
                    .messageGroupId("A")
                    .messageDeduplicationId("explicit-1"));
    assertNotEquals(sent.get(0).answer.messageId(), explicit.messageId());

    Map<String, String> sequenceById = new HashMap<>();
    for (Sent s : sent) sequenceById.put(s.answer.messageId(), s.answer.sequenceNumber());
    sequenceById.put(explicit.messageId(), explicit.sequenceNumber());

    // A group with messages in flight gives out no more until they are deleted: a second
    // receive before any delete holds none of the groups the first one returned.
    List<Message> first =
        sqs.receiveMessage(
                r ->
                    r.queueUrl(url)
                        .maxNumberOfMessages(10)
                        .waitTimeSeconds(5)
                        .messageSystemAttributeNames(MessageSystemAttributeName.ALL))
            .messages();
    assertFalse(first.isEmpty());
    Set<String> lockedGroups = new HashSet<>();
    for (Message m : first)
      lockedGroups.add(m.attributes().get(MessageSystemAttributeName.MESSAGE_GROUP_ID));
    List<Message> second =
        sqs.receiveMessage(
                r ->
                    r.queueUrl(url)
                        .maxNumberOfMessages(10)
                        .waitTimeSeconds(0)
                        .messageSystemAttributeNames(MessageSystemAttributeName.ALL))
            .messages();
    for (Message m : second) {
      String g = m.attributes().get(MessageSystemAttributeName.MESSAGE_GROUP_ID);
      assertFalse(lockedGroups.contains(g), () -> "group " + g + " was in flight: " + m.body());
    }
    List<Message> all = new ArrayList<>(first);
    all.addAll(second);
    for (Message m : all) sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(m.receiptHandle()));
    all.addAll(
        Compat.receiveUntil(
            sqs,
            url,
            7 - all.size(),
            Duration.ofSeconds(20),
            true,
            r -> r.messageSystemAttributeNames(MessageSystemAttributeName.ALL)));

    Map<String, List<String>> byGroup = new HashMap<>();
    for (Message m : all) {
      Map<MessageSystemAttributeName, String> a = m.attributes();
      String group = a.get(MessageSystemAttributeName.MESSAGE_GROUP_ID);
      byGroup.computeIfAbsent(group, g -> new ArrayList<>()).add(m.body());
      assertEquals(
          sequenceById.get(m.messageId()),
          a.get(MessageSystemAttributeName.SEQUENCE_NUMBER),
          () -> "the SequenceNumber delivered is the one answered at send: " + m.body());
      String dedup = a.get(MessageSystemAttributeName.MESSAGE_DEDUPLICATION_ID);
      if (m.messageId().equals(explicit.messageId())) {
        assertEquals("explicit-1", dedup);
      } else {
        assertEquals(Compat.sha256Hex(m.body()), dedup, "content-based: the body's SHA-256");
      }
    }
    assertEquals(
        List.of("A1", "A2", "A3", "A1"), byGroup.get("A"), "group A in send order, dup dropped");
    assertEquals(List.of("B1", "B2", "B3"), byGroup.get("B"), "group B in send order");
    assertEquals(7, all.size());
    assertTrue(sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(1)).messages().isEmpty());
  }

  @Test
  void aFifoSendWithoutMessageGroupIdIsRefused() {
    String url =
        createQueue(
            Compat.unique("java-fifo-nogroup") + ".fifo",
            Map.of(QueueAttributeName.FIFO_QUEUE, "true"));
    SqsException e =
        assertThrows(
            SqsException.class,
            () ->
                sqs.sendMessage(r -> r.queueUrl(url).messageBody("x").messageDeduplicationId("d")));
    assertEquals(400, e.statusCode());
    assertEquals("MissingParameter", e.awsErrorDetails().errorCode());
    // Without ContentBasedDeduplication a MessageDeduplicationId is required.
    SqsException noDedup =
        assertThrows(
            SqsException.class,
            () -> sqs.sendMessage(r -> r.queueUrl(url).messageBody("x").messageGroupId("g")));
    assertEquals(400, noDedup.statusCode());
    assertEquals("InvalidParameterValue", noDedup.awsErrorDetails().errorCode());
  }
}
