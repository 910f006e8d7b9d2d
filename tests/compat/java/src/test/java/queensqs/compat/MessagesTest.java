package queensqs.compat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeNameForSends;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeValue;
import software.amazon.awssdk.services.sqs.model.ReceiptHandleIsInvalidException;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageResponse;

/**
 * The SDK's checksum interceptor checks MD5OfMessageBody, MD5OfMessageAttributes and
 * MD5OfMessageSystemAttributes on every send and receive, and throws if one does not match; so a
 * send and a receive that return at all have passed it. The tests also compare the digests with
 * ones computed here by SQS's documented algorithm, and the values with what was sent.
 */
class MessagesTest extends ClientTest {

  static final byte[] BYTES = {0, 1, 2, (byte) 0x7f, (byte) 0x80, (byte) 0xfe, (byte) 0xff};
  static final byte[] GIF = "GIF89a\u0001\u0000".getBytes(StandardCharsets.ISO_8859_1);
  static final String TRACE =
      "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";

  static Map<String, MessageAttributeValue> everyType() {
    return Map.of(
        "s", Compat.stringAttr("String", "text ✓ <&> \"quoted\""),
        "n", Compat.stringAttr("Number", "-42.5e3"),
        "b", Compat.binaryAttr("Binary", BYTES),
        "custom", Compat.stringAttr("String.custom", "x"),
        "float", Compat.stringAttr("Number.float", "3.14159"),
        "gif", Compat.binaryAttr("Binary.gif", GIF));
  }

  @Test
  void sendAndReceiveEveryAttributeTypeWithMatchingDigests() {
    String url = createQueue(Compat.unique("java-msgs"), Map.of());
    String body = "héllo from Java ✓ 🚀 <xml>&amp; \"json\" \\ \t tab\nline";
    Map<String, MessageAttributeValue> attrs = everyType();
    Map<String, MessageSystemAttributeValue> system =
        Map.of(
            "AWSTraceHeader",
            MessageSystemAttributeValue.builder().dataType("String").stringValue(TRACE).build());

    long before = System.currentTimeMillis();
    SendMessageResponse sent =
        sqs.sendMessage(
            r ->
                r.queueUrl(url)
                    .messageBody(body)
                    .messageAttributes(attrs)
                    .messageSystemAttributes(
                        Map.of(
                            MessageSystemAttributeNameForSends.AWS_TRACE_HEADER,
                            system.get("AWSTraceHeader"))));
    long after = System.currentTimeMillis();
    assertNotNull(sent.messageId());
    assertEquals(Compat.md5Hex(body), sent.md5OfMessageBody());
    assertEquals(Compat.md5OfAttributes(attrs), sent.md5OfMessageAttributes());
    assertEquals(Compat.md5OfSystemAttributes(system), sent.md5OfMessageSystemAttributes());
    assertNull(sent.sequenceNumber(), "no SequenceNumber on a standard queue");

    List<Message> got =
        sqs.receiveMessage(
                r ->
                    r.queueUrl(url)
                        .maxNumberOfMessages(10)
                        .waitTimeSeconds(5)
                        .messageAttributeNames("All")
                        .messageSystemAttributeNames(MessageSystemAttributeName.ALL))
            .messages();
    assertEquals(1, got.size());
    Message m = got.get(0);
    assertEquals(sent.messageId(), m.messageId());
    assertEquals(body, m.body());
    assertEquals(sent.md5OfMessageBody(), m.md5OfBody());
    assertEquals(sent.md5OfMessageAttributes(), m.md5OfMessageAttributes());
    assertNotNull(m.receiptHandle());

    assertEquals(attrs.keySet(), m.messageAttributes().keySet());
    for (var e : attrs.entrySet()) {
      MessageAttributeValue want = e.getValue();
      MessageAttributeValue have = m.messageAttributes().get(e.getKey());
      assertEquals(want.dataType(), have.dataType(), e.getKey());
      assertEquals(want.stringValue(), have.stringValue(), e.getKey());
      if (want.binaryValue() == null) {
        assertNull(have.binaryValue(), e.getKey());
      } else {
        assertArrayEquals(
            want.binaryValue().asByteArray(), have.binaryValue().asByteArray(), e.getKey());
      }
    }

    Map<MessageSystemAttributeName, String> sys = m.attributes();
    assertEquals("1", sys.get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT));
    String sentTimestamp = sys.get(MessageSystemAttributeName.SENT_TIMESTAMP);
    assertNotNull(sentTimestamp, () -> "SentTimestamp under All: " + sys);
    long ts = Long.parseLong(sentTimestamp);
    assertTrue(
        ts >= before - 2000 && ts <= after + 2000,
        () ->
            "SentTimestamp " + ts + " is epoch millis of the send (" + before + ".." + after + ")");
    assertEquals(TRACE, sys.get(MessageSystemAttributeName.AWS_TRACE_HEADER));

    // Deleted: nothing left to receive.
    sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(m.receiptHandle()));
    assertTrue(sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(1)).messages().isEmpty());
  }

  @Test
  void attributesAskedForByNameAndTheDigestOfWhatIsReturned() {
    String url = createQueue(Compat.unique("java-names"), Map.of());
    Map<String, MessageAttributeValue> attrs = everyType();
    sqs.sendMessage(r -> r.queueUrl(url).messageBody("named").messageAttributes(attrs));

    // Two of six by name, and one system attribute by name: the digest the SDK checks is of
    // the two returned.
    Message m =
        sqs.receiveMessage(
                r ->
                    r.queueUrl(url)
                        .waitTimeSeconds(5)
                        .messageAttributeNames("s", "gif")
                        .messageSystemAttributeNames(MessageSystemAttributeName.SENT_TIMESTAMP))
            .messages()
            .get(0);
    assertEquals(Set.of("s", "gif"), m.messageAttributes().keySet());
    assertEquals(
        Compat.md5OfAttributes(Map.of("s", attrs.get("s"), "gif", attrs.get("gif"))),
        m.md5OfMessageAttributes());
    assertEquals(Set.of(MessageSystemAttributeName.SENT_TIMESTAMP), m.attributes().keySet());

    // Released and received again with no attribute names: none returned, no digest.
    sqs.changeMessageVisibility(
        r -> r.queueUrl(url).receiptHandle(m.receiptHandle()).visibilityTimeout(0));
    Message again = sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5)).messages().get(0);
    assertEquals(m.messageId(), again.messageId());
    assertTrue(again.messageAttributes().isEmpty(), () -> "" + again.messageAttributes());
    assertNull(again.md5OfMessageAttributes());
    assertTrue(again.attributes().isEmpty(), () -> "" + again.attributes());
    sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(again.receiptHandle()));
  }

  @Test
  void aMessageWithoutAttributesHasNoAttributeDigest() {
    String url = createQueue(Compat.unique("java-plain"), Map.of());
    SendMessageResponse sent = sqs.sendMessage(r -> r.queueUrl(url).messageBody("plain"));
    assertEquals(Compat.md5Hex("plain"), sent.md5OfMessageBody());
    assertNull(sent.md5OfMessageAttributes());
    assertNull(sent.md5OfMessageSystemAttributes());
    Message m =
        sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5).messageAttributeNames("All"))
            .messages()
            .get(0);
    assertEquals("plain", m.body());
    assertTrue(m.messageAttributes().isEmpty());
    assertNull(m.md5OfMessageAttributes());
  }

  @Test
  void aLargeMultibyteBodyRoundTrips() {
    String url = createQueue(Compat.unique("java-large"), Map.of());
    // 60,000 three- and four-byte characters, 200,000 bytes of UTF-8: under the 256 KiB default.
    String body = "€✓😀".repeat(20_000);
    assertEquals(200_000, body.getBytes(StandardCharsets.UTF_8).length);
    SendMessageResponse sent =
        sqs.sendMessage(r -> r.queueUrl(url).messageBody(body).messageAttributes(everyType()));
    assertEquals(Compat.md5Hex(body), sent.md5OfMessageBody());
    Message m =
        sqs.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5).messageAttributeNames("All"))
            .messages()
            .get(0);
    assertEquals(body, m.body());
    assertEquals(sent.md5OfMessageBody(), m.md5OfBody());
  }

  @Test
  void aReceiptHandleTheEndpointNeverIssuedIsReceiptHandleIsInvalidException() {
    String url = createQueue(Compat.unique("java-handle"), Map.of());
    ReceiptHandleIsInvalidException e =
        assertThrows(
            ReceiptHandleIsInvalidException.class,
            () -> sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle("bm90IGEgaGFuZGxl")));
    assertEquals(400, e.statusCode());
  }

  /**
   * What the other tests lean on: this SDK version does check the digests. A client whose answers
   * are altered after unmarshalling (before the SDK's checksum interceptor reads them) refuses a
   * send and a receive whose MD5s no longer match.
   */
  @Test
  void theSdkRefusesDigestsThatDoNotMatch() {
    String url = createQueue(Compat.unique("java-md5"), Map.of());
    ExecutionInterceptor tamper =
        new ExecutionInterceptor() {
          @Override
          public SdkResponse modifyResponse(Context.ModifyResponse ctx, ExecutionAttributes ea) {
            if (ctx.response() instanceof SendMessageResponse r) {
              return r.toBuilder().md5OfMessageAttributes("0".repeat(32)).build();
            }
            if (ctx.response() instanceof ReceiveMessageResponse r && r.hasMessages()) {
              return r.toBuilder()
                  .messages(
                      r.messages().stream()
                          .map(m -> m.toBuilder().body(m.body() + "!").build())
                          .toList())
                  .build();
            }
            return ctx.response();
          }
        };
    try (SqsClient tampered =
        Compat.sqsBuilder().overrideConfiguration(o -> o.addExecutionInterceptor(tamper)).build()) {
      SdkClientException onSend =
          assertThrows(
              SdkClientException.class,
              () ->
                  tampered.sendMessage(
                      r -> r.queueUrl(url).messageBody("m").messageAttributes(everyType())));
      assertTrue(onSend.getMessage().contains("MD5"), onSend.getMessage());
      SdkClientException onReceive =
          assertThrows(
              SdkClientException.class,
              () -> tampered.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(5)));
      assertTrue(onReceive.getMessage().contains("MD5"), onReceive.getMessage());
    }
  }
}
