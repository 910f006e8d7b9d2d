package queensqs.compat;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sns.SnsClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.SqsClientBuilder;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeValue;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageRequest;

/**
 * The clients as the SDK's documentation builds them (an endpoint override, a region, static
 * credentials, the default sync HTTP client), and what the tests share.
 */
final class Compat {
  private Compat() {}

  static String endpoint() {
    String endpoint = System.getenv("QUEEN_SQS_ENDPOINT");
    if (endpoint == null || endpoint.isBlank()) {
      fail("QUEEN_SQS_ENDPOINT is not set (scripts/compat.sh sets it)");
    }
    return endpoint;
  }

  private static final StaticCredentialsProvider CREDENTIALS =
      StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test"));

  static SqsClient sqs() {
    return sqsBuilder().build();
  }

  static SqsClientBuilder sqsBuilder() {
    return SqsClient.builder()
        .endpointOverride(URI.create(endpoint()))
        .region(Region.US_EAST_1)
        .credentialsProvider(CREDENTIALS)
        .httpClientBuilder(Apache5HttpClient.builder().socketTimeout(Duration.ofSeconds(30)))
        .overrideConfiguration(o -> o.apiCallTimeout(Duration.ofSeconds(30)));
  }

  static SnsClient sns() {
    return SnsClient.builder()
        .endpointOverride(URI.create(endpoint()))
        .region(Region.US_EAST_1)
        .credentialsProvider(CREDENTIALS)
        .httpClientBuilder(Apache5HttpClient.builder().socketTimeout(Duration.ofSeconds(30)))
        .overrideConfiguration(o -> o.apiCallTimeout(Duration.ofSeconds(30)))
        .build();
  }

  static String unique(String prefix) {
    return prefix + "-" + System.nanoTime();
  }

  static String md5Hex(String s) {
    return md5Hex(s.getBytes(StandardCharsets.UTF_8));
  }

  static String md5Hex(byte[] bytes) {
    return HexFormat.of().formatHex(digest("MD5").digest(bytes));
  }

  static String sha256Hex(String s) {
    return HexFormat.of().formatHex(digest("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
  }

  private static MessageDigest digest(String algorithm) {
    try {
      return MessageDigest.getInstance(algorithm);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * MD5OfMessageAttributes computed independently of the SDK, by the algorithm SQS documents: names
   * sorted; each of name, data type and value length-prefixed (4 bytes, big-endian); a transport
   * byte (1 string, 2 binary) before the value.
   */
  static String md5OfAttributes(Map<String, MessageAttributeValue> attrs) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (var e : new TreeMap<>(attrs).entrySet()) {
      MessageAttributeValue v = e.getValue();
      encode(out, e.getKey(), v.dataType(), v.stringValue(), v.binaryValue());
    }
    return md5Hex(out.toByteArray());
  }

  static String md5OfSystemAttributes(Map<String, MessageSystemAttributeValue> attrs) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (var e : new TreeMap<>(attrs).entrySet()) {
      MessageSystemAttributeValue v = e.getValue();
      encode(out, e.getKey(), v.dataType(), v.stringValue(), v.binaryValue());
    }
    return md5Hex(out.toByteArray());
  }

  private static void encode(
      ByteArrayOutputStream out, String name, String type, String string, SdkBytes binary) {
    lengthPrefixed(out, name.getBytes(StandardCharsets.UTF_8));
    lengthPrefixed(out, type.getBytes(StandardCharsets.UTF_8));
    if (type.startsWith("Binary")) {
      out.write(2);
      lengthPrefixed(out, binary.asByteArray());
    } else {
      out.write(1);
      lengthPrefixed(out, string.getBytes(StandardCharsets.UTF_8));
    }
  }

  private static void lengthPrefixed(ByteArrayOutputStream out, byte[] bytes) {
    out.writeBytes(ByteBuffer.allocate(4).putInt(bytes.length).array());
    out.writeBytes(bytes);
  }

  static MessageAttributeValue stringAttr(String type, String value) {
    return MessageAttributeValue.builder().dataType(type).stringValue(value).build();
  }

  static MessageAttributeValue binaryAttr(String type, byte[] value) {
    return MessageAttributeValue.builder()
        .dataType(type)
        .binaryValue(SdkBytes.fromByteArray(value))
        .build();
  }

  static String queueArn(SqsClient sqs, String url) {
    return sqs.getQueueAttributes(r -> r.queueUrl(url).attributeNames(QueueAttributeName.QUEUE_ARN))
        .attributes()
        .get(QueueAttributeName.QUEUE_ARN);
  }

  /**
   * Receives (long polls of up to 5 s) until {@code count} messages have arrived or {@code within}
   * has passed; deletes each batch after it arrives when {@code delete} is set.
   */
  static List<Message> receiveUntil(
      SqsClient sqs,
      String url,
      int count,
      Duration within,
      boolean delete,
      java.util.function.Consumer<ReceiveMessageRequest.Builder> options) {
    List<Message> got = new ArrayList<>();
    long deadline = System.nanoTime() + within.toNanos();
    while (got.size() < count && System.nanoTime() < deadline) {
      List<Message> batch =
          sqs.receiveMessage(
                  r -> {
                    r.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(5);
                    options.accept(r);
                  })
              .messages();
      got.addAll(batch);
      for (Message m : batch) {
        if (delete) {
          sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(m.receiptHandle()));
        }
      }
    }
    return got;
  }
}
