package queensqs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.awspring.cloud.sns.core.SnsTemplate;
import io.awspring.cloud.sqs.annotation.SnsNotificationMessage;
import io.awspring.cloud.sqs.annotation.SqsListener;
import io.awspring.cloud.sqs.listener.acknowledgement.Acknowledgement;
import io.awspring.cloud.sqs.operations.SqsTemplate;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.support.MessageBuilder;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sns.SnsClient;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * Spring Cloud AWS 3.4 on Spring Boot 3.5 against the endpoint: SqsTemplate and SnsTemplate
 * send, @SqsListener methods consume (ON_SUCCESS and MANUAL acknowledgement, batches, SNS
 * notifications). The application is configured only by the documented properties
 * (spring.cloud.aws.endpoint, region, static credentials). The queues whose attributes matter
 * are created before the context starts; every name carries this run's prefix.
 */
@SpringBootTest(classes = SpringCloudAwsTest.App.class)
class SpringCloudAwsTest {
    static final String ENDPOINT = endpoint();
    static final String RUN = "sp" + Long.toHexString(System.nanoTime());
    static final SqsAsyncClient SQS = SqsAsyncClient.builder()
            .endpointOverride(URI.create(ENDPOINT))
            .region(Region.US_EAST_1)
            .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
            .build();

    static {
        String deadArn = arn(create(RUN + "-dead", Map.of()));
        create(RUN + "-failing", Map.of(
                QueueAttributeName.VISIBILITY_TIMEOUT, "1",
                QueueAttributeName.REDRIVE_POLICY,
                "{\"deadLetterTargetArn\":\"" + deadArn + "\",\"maxReceiveCount\":\"2\"}"));
        create(RUN + "-manual", Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "3"));
        create(RUN + "-orders", Map.of());
        create(RUN + "-batch", Map.of());
        create(RUN + "-notes", Map.of());
        create(RUN + "-orders.fifo", Map.of(
                QueueAttributeName.FIFO_QUEUE, "true",
                QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "true"));
    }

    static final List<String> ORDERS = new CopyOnWriteArrayList<>();
    static final List<String> FIFO = new CopyOnWriteArrayList<>();
    static final AtomicInteger FAILING = new AtomicInteger();
    static final List<String> DEAD = new CopyOnWriteArrayList<>();
    static final AtomicInteger MANUAL = new AtomicInteger();
    static final List<Integer> BATCH_SIZES = new CopyOnWriteArrayList<>();
    static final List<String> BATCHED = new CopyOnWriteArrayList<>();
    static final List<String> NOTES = new CopyOnWriteArrayList<>();

    @DynamicPropertySource
    static void aws(DynamicPropertyRegistry registry) {
        registry.add("spring.cloud.aws.endpoint", () -> ENDPOINT);
        registry.add("spring.cloud.aws.region.static", () -> "us-east-1");
        registry.add("spring.cloud.aws.credentials.access-key", () -> "test");
        registry.add("spring.cloud.aws.credentials.secret-key", () -> "test");
        registry.add("run.prefix", () -> RUN);
    }

    public record Order(String id, int quantity) {}

    @SpringBootApplication
    static class App {
        @Bean
        Listeners listeners() {
            return new Listeners();
        }
    }

    static class Listeners {
        @SqsListener("${run.prefix}-orders")
        void onOrder(Order order, @Header("tenant") String tenant) {
            ORDERS.add(order.id() + "x" + order.quantity() + "@" + tenant);
        }

        @SqsListener("${run.prefix}-orders.fifo")
        void onFifo(String body) {
            FIFO.add(body);
        }

        @SqsListener("${run.prefix}-failing")
        void onFailing(String body) {
            FAILING.incrementAndGet();
            throw new IllegalStateException("this listener always fails");
        }

        @SqsListener("${run.prefix}-dead")
        void onDead(String body) {
            DEAD.add(body);
        }

        @SqsListener(value = "${run.prefix}-manual", acknowledgementMode = "MANUAL")
        void onManual(String body, Acknowledgement acknowledgement) {
            // The first delivery is left unacknowledged: it must come back once.
            if (MANUAL.incrementAndGet() >= 2) {
                acknowledgement.acknowledge();
            }
        }

        @SqsListener(value = "${run.prefix}-batch", maxMessagesPerPoll = "10")
        void onBatch(List<String> bodies) {
            BATCH_SIZES.add(bodies.size());
            BATCHED.addAll(bodies);
        }

        @SqsListener("${run.prefix}-notes")
        void onNote(@SnsNotificationMessage String message) {
            NOTES.add(message);
        }
    }

    @Autowired
    SqsTemplate sqsTemplate;

    @Autowired
    SnsTemplate snsTemplate;

    @Autowired
    SnsClient snsClient;

    @Test
    void aPojoAndItsHeaderReachTheListener() {
        sqsTemplate.send(to -> to.queue(RUN + "-orders").payload(new Order("o-1", 3)).header("tenant", "acme"));
        await("the order", () -> !ORDERS.isEmpty(), Duration.ofSeconds(20));
        assertThat(ORDERS).containsExactly("o-1x3@acme");
    }

    @Test
    void aFifoGroupIsConsumedInOrder() {
        for (int i = 0; i < 5; i++) {
            int n = i;
            sqsTemplate.send(to -> to.queue(RUN + "-orders.fifo").payload("m" + n).messageGroupId("g1"));
        }
        await("five FIFO messages", () -> FIFO.size() >= 5, Duration.ofSeconds(30));
        assertThat(FIFO).containsExactly("m0", "m1", "m2", "m3", "m4");
    }

    @Test
    void aMessageAListenerAlwaysFailsOnComesBackAndThenReachesTheDeadLetterQueue() {
        sqsTemplate.send(RUN + "-failing", "poison");
        await("the dead-letter copy", () -> !DEAD.isEmpty(), Duration.ofSeconds(30));
        assertThat(DEAD).containsExactly("poison");
        assertThat(FAILING.get()).as("deliveries before the move (maxReceiveCount 2)").isEqualTo(2);
    }

    @Test
    void anUnacknowledgedMessageComesBackAndAnAcknowledgedOneDoesNot() throws InterruptedException {
        sqsTemplate.send(RUN + "-manual", "ack me the second time");
        await("the second delivery", () -> MANUAL.get() >= 2, Duration.ofSeconds(20));
        // Past another visibility timeout (3 s) and the acknowledgement interval.
        Thread.sleep(6000);
        assertThat(MANUAL.get()).as("deliveries").isEqualTo(2);
    }

    @Test
    void aBatchListenerGetsMessagesTogether() {
        List<Message<String>> messages = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            messages.add(MessageBuilder.withPayload("b" + i).build());
        }
        sqsTemplate.sendMany(RUN + "-batch", messages);
        await("ten batched messages", () -> BATCHED.size() >= 10, Duration.ofSeconds(20));
        assertThat(BATCHED).containsExactlyInAnyOrder("b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9");
        assertThat(BATCH_SIZES).anyMatch(size -> size > 1);
    }

    @Test
    void snsTemplateFansOutToAnSqsListener() {
        String topicArn = snsClient.createTopic(b -> b.name(RUN + "-topic")).topicArn();
        snsClient.subscribe(b -> b.topicArn(topicArn).protocol("sqs").endpoint(arn(url(RUN + "-notes"))));
        snsTemplate.sendNotification(topicArn, "hello from Spring", "greeting");
        await("the notification", () -> !NOTES.isEmpty(), Duration.ofSeconds(20));
        assertThat(NOTES).containsExactly("hello from Spring");
    }

    static String endpoint() {
        String endpoint = System.getenv("QUEEN_SQS_ENDPOINT");
        if (endpoint == null || endpoint.isEmpty()) {
            throw new IllegalStateException("QUEEN_SQS_ENDPOINT is not set (scripts/frameworks.sh sets it)");
        }
        return endpoint;
    }

    static String create(String name, Map<QueueAttributeName, String> attributes) {
        return SQS.createQueue(b -> b.queueName(name).attributes(attributes)).join().queueUrl();
    }

    static String url(String name) {
        return SQS.getQueueUrl(b -> b.queueName(name)).join().queueUrl();
    }

    static String arn(String url) {
        return SQS.getQueueAttributes(b -> b.queueUrl(url).attributeNames(QueueAttributeName.QUEUE_ARN))
                .join().attributes().get(QueueAttributeName.QUEUE_ARN);
    }

    static void await(String what, BooleanSupplier done, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + max.toSeconds() + " s waiting for " + what);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
