package queensqs.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.BatchEntryIdsNotDistinctException;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.EmptyBatchRequestException;
import software.amazon.awssdk.services.sqs.model.InvalidBatchEntryIdException;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResultEntry;
import software.amazon.awssdk.services.sqs.model.TooManyEntriesInBatchRequestException;

class BatchesTest extends ClientTest {

  static List<SendMessageBatchRequestEntry> entries(int n) {
    return IntStream.range(0, n)
        .mapToObj(
            i ->
                SendMessageBatchRequestEntry.builder()
                    .id("e" + i)
                    .messageBody("batch body " + i + " ✓")
                    .messageAttributes(
                        Map.of(
                            "index", Compat.stringAttr("Number", Integer.toString(i)),
                            "raw", Compat.binaryAttr("Binary", new byte[] {(byte) i, (byte) 0xff})))
                    .build())
        .toList();
  }

  @Test
  void sendTenReceiveTenDeleteTen() {
    String url = createQueue(Compat.unique("java-batch"), Map.of());
    List<SendMessageBatchRequestEntry> sent = entries(10);
    SendMessageBatchResponse out = sqs.sendMessageBatch(r -> r.queueUrl(url).entries(sent));
    assertEquals(10, out.successful().size(), () -> "failed: " + out.failed());
    assertTrue(out.failed().isEmpty());
    Map<String, SendMessageBatchResultEntry> byId =
        out.successful().stream()
            .collect(Collectors.toMap(SendMessageBatchResultEntry::id, e -> e));
    for (SendMessageBatchRequestEntry e : sent) {
      SendMessageBatchResultEntry r = byId.get(e.id());
      assertNotNull(r, "a result for " + e.id());
      assertNotNull(r.messageId());
      assertEquals(Compat.md5Hex(e.messageBody()), r.md5OfMessageBody());
      assertEquals(Compat.md5OfAttributes(e.messageAttributes()), r.md5OfMessageAttributes());
    }
    Set<String> ids =
        out.successful().stream()
            .map(SendMessageBatchResultEntry::messageId)
            .collect(Collectors.toSet());
    assertEquals(10, ids.size(), "ten distinct MessageIds");

    Map<String, String> bodies = new HashMap<>();
    int deleted = 0;
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (bodies.size() < 10 && System.nanoTime() < deadline) {
      List<Message> got =
          sqs.receiveMessage(
                  r ->
                      r.queueUrl(url)
                          .maxNumberOfMessages(10)
                          .waitTimeSeconds(5)
                          .messageAttributeNames("All"))
              .messages();
      assertTrue(got.size() <= 10);
      if (got.isEmpty()) {
        continue;
      }
      List<DeleteMessageBatchRequestEntry> del = new ArrayList<>();
      for (int i = 0; i < got.size(); i++) {
        Message m = got.get(i);
        assertTrue(ids.contains(m.messageId()), "a message that was sent");
        assertNull(bodies.put(m.messageId(), m.body()), "each delivered once");
        String index = m.messageAttributes().get("index").stringValue();
        assertEquals("batch body " + index + " ✓", m.body());
        del.add(
            DeleteMessageBatchRequestEntry.builder()
                .id("d" + i)
                .receiptHandle(m.receiptHandle())
                .build());
      }
      DeleteMessageBatchResponse res = sqs.deleteMessageBatch(r -> r.queueUrl(url).entries(del));
      assertTrue(res.failed().isEmpty(), () -> "DeleteMessageBatch failed: " + res.failed());
      assertEquals(
          del.stream().map(DeleteMessageBatchRequestEntry::id).collect(Collectors.toSet()),
          res.successful().stream().map(s -> s.id()).collect(Collectors.toSet()));
      deleted += res.successful().size();
    }
    assertEquals(10, bodies.size(), "all ten received within 20 s");
    assertEquals(10, deleted);
    assertTrue(
        sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(1)).messages().isEmpty(),
        "nothing left after the batch delete");
  }

  @Test
  void batchRequestErrorsAreTypedExceptions() {
    String url = createQueue(Compat.unique("java-batch-err"), Map.of());
    SendMessageBatchRequestEntry a =
        SendMessageBatchRequestEntry.builder().id("same").messageBody("1").build();
    SendMessageBatchRequestEntry b =
        SendMessageBatchRequestEntry.builder().id("same").messageBody("2").build();
    BatchEntryIdsNotDistinctException notDistinct =
        assertThrows(
            BatchEntryIdsNotDistinctException.class,
            () -> sqs.sendMessageBatch(r -> r.queueUrl(url).entries(a, b)));
    assertEquals(
        "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
        notDistinct.awsErrorDetails().errorCode());
    assertThrows(
        EmptyBatchRequestException.class,
        () -> sqs.sendMessageBatch(r -> r.queueUrl(url).entries(List.of())));
    assertThrows(
        TooManyEntriesInBatchRequestException.class,
        () -> sqs.sendMessageBatch(r -> r.queueUrl(url).entries(entries(11))));
    assertThrows(
        InvalidBatchEntryIdException.class,
        () ->
            sqs.sendMessageBatch(
                r ->
                    r.queueUrl(url)
                        .entries(
                            SendMessageBatchRequestEntry.builder()
                                .id("not valid!")
                                .messageBody("x")
                                .build())));
    assertThrows(
        BatchEntryIdsNotDistinctException.class,
        () ->
            sqs.deleteMessageBatch(
                r ->
                    r.queueUrl(url)
                        .entries(
                            DeleteMessageBatchRequestEntry.builder()
                                .id("x")
                                .receiptHandle("a")
                                .build(),
                            DeleteMessageBatchRequestEntry.builder()
                                .id("x")
                                .receiptHandle("b")
                                .build())));
    // None of the refused batches sent anything.
    assertTrue(sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(1)).messages().isEmpty());
  }

  @Test
  void aBadEntryFailsAloneInsideTheBatch() {
    String url = createQueue(Compat.unique("java-batch-partial"), Map.of());
    sqs.sendMessage(r -> r.queueUrl(url).messageBody("good"));
    Message m = sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5)).messages().get(0);

    DeleteMessageBatchResponse res =
        sqs.deleteMessageBatch(
            r ->
                r.queueUrl(url)
                    .entries(
                        DeleteMessageBatchRequestEntry.builder()
                            .id("ok")
                            .receiptHandle(m.receiptHandle())
                            .build(),
                        DeleteMessageBatchRequestEntry.builder()
                            .id("bad")
                            .receiptHandle("bm90IGEgaGFuZGxl")
                            .build()));
    assertEquals(List.of("ok"), res.successful().stream().map(s -> s.id()).toList());
    assertEquals(1, res.failed().size());
    BatchResultErrorEntry bad = res.failed().get(0);
    assertEquals("bad", bad.id());
    assertEquals("ReceiptHandleIsInvalid", bad.code());
    assertTrue(bad.senderFault(), "an invalid handle is the sender's fault");

    // A send batch with one body outside SQS's allowed characters (U+0000 is not in #x9 | #xA
    // | #xD | [#x20-#xD7FF] | ...): that entry fails alone, the other is sent.
    SendMessageBatchResponse sent =
        sqs.sendMessageBatch(
            r ->
                r.queueUrl(url)
                    .entries(
                        SendMessageBatchRequestEntry.builder()
                            .id("fine")
                            .messageBody("fine")
                            .build(),
                        SendMessageBatchRequestEntry.builder()
                            .id("nul")
                            .messageBody("bad \u0000 body")
                            .build()));
    assertEquals(List.of("fine"), sent.successful().stream().map(s -> s.id()).toList());
    assertEquals(List.of("nul"), sent.failed().stream().map(f -> f.id()).toList());
    assertEquals("InvalidMessageContents", sent.failed().get(0).code());
    assertTrue(sent.failed().get(0).senderFault());
    Set<String> left = new HashSet<>();
    Compat.receiveUntil(sqs, url, 1, Duration.ofSeconds(6), true, r -> {})
        .forEach(x -> left.add(x.body()));
    assertEquals(Set.of("fine"), left, "only the good entry was sent");
  }
}
