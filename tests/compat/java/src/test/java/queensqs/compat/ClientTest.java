package queensqs.compat;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import software.amazon.awssdk.services.sns.SnsClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

/**
 * One SQS and one SNS client per test class; the queues and topics a test made are deleted after
 * it.
 */
abstract class ClientTest {
  static SqsClient sqs;
  static SnsClient sns;
  private final List<String> queues = new ArrayList<>();
  private final List<String> topics = new ArrayList<>();

  @BeforeAll
  static void openClients() {
    sqs = Compat.sqs();
    sns = Compat.sns();
  }

  @AfterAll
  static void closeClients() {
    sqs.close();
    sns.close();
  }

  String createQueue(String name, Map<QueueAttributeName, String> attributes) {
    String url = sqs.createQueue(r -> r.queueName(name).attributes(attributes)).queueUrl();
    assertNotNull(url, "CreateQueue answers a QueueUrl");
    assertTrue(url.endsWith("/" + name), () -> "queue URL ends with its name: " + url);
    queues.add(url);
    return url;
  }

  String createTopic(String name) {
    String arn = sns.createTopic(r -> r.name(name)).topicArn();
    assertNotNull(arn, "CreateTopic answers a TopicArn");
    topics.add(arn);
    return arn;
  }

  @AfterEach
  void deleteWhatTheTestMade() {
    for (String url : queues) {
      try {
        sqs.deleteQueue(r -> r.queueUrl(url));
      } catch (QueueDoesNotExistException alreadyGone) {
        // the test deleted it itself
      }
    }
    for (String arn : topics) {
      sns.deleteTopic(r -> r.topicArn(arn)); // idempotent on AWS
    }
  }
}
