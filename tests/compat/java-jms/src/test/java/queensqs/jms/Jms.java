package queensqs.jms;

import com.amazon.sqs.javamessaging.ProviderConfiguration;
import com.amazon.sqs.javamessaging.SQSConnection;
import com.amazon.sqs.javamessaging.SQSConnectionFactory;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.CreateQueueRequest;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * The suite's plumbing: an SqsClient on the endpoint (QUEEN_SQS_ENDPOINT), the JMS
 * connection factory over it as the library's README builds one, and unique queues.
 */
final class Jms {
  private Jms() {}

  /** QUEEN_SQS_ENDPOINT; no default: a fixed port could be answered by any server. */
  static String endpoint() {
    String endpoint = System.getenv("QUEEN_SQS_ENDPOINT");
    if (endpoint == null || endpoint.isBlank()) {
      throw new IllegalStateException(
          "QUEEN_SQS_ENDPOINT is not set: the suite runs against the endpoint scripts/frameworks.sh started and checked");
    }
    return endpoint;
  }

  static final SqsClient SQS =
      SqsClient.builder()
          .endpointOverride(URI.create(endpoint()))
          .region(Region.US_EAST_1)
          .credentialsProvider(
              StaticCredentialsProvider.create(
                  AwsBasicCredentials.create(
                      System.getenv().getOrDefault("AWS_ACCESS_KEY_ID", "test"),
                      System.getenv().getOrDefault("AWS_SECRET_ACCESS_KEY", "test"))))
          .httpClientBuilder(Apache5HttpClient.builder().socketTimeout(Duration.ofSeconds(30)))
          .build();

  /** A connection with the given prefetch (0: every receive is a ReceiveMessage call). */
  static SQSConnection connect(int prefetch) throws Exception {
    var factory = new SQSConnectionFactory(new ProviderConfiguration().withNumberOfMessagesToPrefetch(prefetch), SQS);
    return factory.createConnection();
  }

  /** Creates a queue through the library's client wrapper, as its README does; answers the name. */
  static String queue(SQSConnection c, String prefix, Map<QueueAttributeName, String> attrs) throws Exception {
    String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 12);
    if (attrs.containsKey(QueueAttributeName.FIFO_QUEUE)) name += ".fifo";
    var client = c.getWrappedAmazonSQSClient();
    if (client.queueExists(name)) throw new IllegalStateException(name + " exists already");
    client.createQueue(CreateQueueRequest.builder().queueName(name).attributes(attrs).build());
    return name;
  }

  static String url(String name) {
    return SQS.getQueueUrl(b -> b.queueName(name)).queueUrl();
  }

  static int[] depth(String name) {
    var a =
        SQS.getQueueAttributes(
                b ->
                    b.queueUrl(url(name))
                        .attributeNames(
                            QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                            QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE))
            .attributes();
    return new int[] {
      Integer.parseInt(a.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)),
      Integer.parseInt(a.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE))
    };
  }

  static void wake(String name) {
    SQS.sendMessage(
        b -> {
          b.queueUrl(url(name)).messageBody("wake");
          if (name.endsWith(".fifo")) b.messageGroupId("wake").messageDeduplicationId(UUID.randomUUID().toString());
        });
  }

  static void delete(String name) {
    try {
      SQS.deleteQueue(b -> b.queueUrl(url(name)));
    } catch (RuntimeException ignored) {
      // already gone
    }
  }
}
