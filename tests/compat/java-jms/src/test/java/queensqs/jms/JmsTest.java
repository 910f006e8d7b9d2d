package queensqs.jms;

import static org.junit.jupiter.api.Assertions.*;

import com.amazon.sqs.javamessaging.SQSConnection;
import com.amazon.sqs.javamessaging.SQSSession;
import jakarta.jms.BytesMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * The Amazon SQS Java Messaging Library (JMS) against the endpoint: producers and
 * synchronous and listener consumers, acknowledge modes and what an unacknowledged message
 * does, the three body types, typed properties as message attributes, FIFO groups and
 * deduplication.
 */
class JmsTest {
  private final List<SQSConnection> connections = new ArrayList<>();
  private final List<String> queues = new ArrayList<>();

  private SQSConnection connect(int prefetch) throws Exception {
    SQSConnection c = Jms.connect(prefetch);
    connections.add(c);
    return c;
  }

  private String queue(SQSConnection c, String prefix, Map<QueueAttributeName, String> attrs) throws Exception {
    String name = Jms.queue(c, prefix, attrs);
    queues.add(name);
    return name;
  }

  @AfterEach
  void close() throws Exception {
    // A consumer's close waits for its receive in flight, which the library makes a 20 s
    // long poll: one more message ends it at once (deleting the queue does not, here).
    queues.forEach(Jms::wake);
    for (SQSConnection c : connections) c.close();
    queues.forEach(Jms::delete);
  }

  @Test
  void producerAndSynchronousConsumer() throws Exception {
    SQSConnection c = connect(0);
    String name = queue(c, "jms-sync", Map.of());
    Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
    var producer = s.createProducer(s.createQueue(name));
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      TextMessage m = s.createTextMessage("hello " + i + " <&> \u00e9\u2603");
      producer.send(m);
      assertTrue(m.getJMSMessageID().startsWith("ID:"), m.getJMSMessageID());
      ids.add(m.getJMSMessageID());
    }
    MessageConsumer consumer = s.createConsumer(s.createQueue(name));
    c.start();
    List<String> bodies = new ArrayList<>();
    List<String> got = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Message m = consumer.receive(5000);
      assertNotNull(m, "message " + i);
      bodies.add(((TextMessage) m).getText());
      got.add(m.getJMSMessageID());
      assertFalse(m.getJMSRedelivered());
      assertEquals(1, m.getIntProperty("JMSXDeliveryCount"));
    }
    Collections.sort(bodies);
    assertEquals(List.of("hello 0 <&> \u00e9\u2603", "hello 1 <&> \u00e9\u2603", "hello 2 <&> \u00e9\u2603"), bodies);
    assertEquals(ids.stream().sorted().toList(), got.stream().sorted().toList());
    assertNull(consumer.receiveNoWait());
    assertArrayEquals(new int[] {0, 0}, Jms.depth(name), "auto-acknowledged messages are deleted");
  }

  @Test
  void messageListenerConsumer() throws Exception {
    SQSConnection c = connect(3);
    String name = queue(c, "jms-listener", Map.of());
    Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
    var producer = s.createProducer(s.createQueue(name));
    for (int i = 0; i < 8; i++) producer.send(s.createTextMessage("l" + i));
    List<String> seen = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch all = new CountDownLatch(8);
    s.createConsumer(s.createQueue(name))
        .setMessageListener(
            m -> {
              try {
                seen.add(((TextMessage) m).getText());
              } catch (Exception e) {
                seen.add("error: " + e);
              }
              all.countDown();
            });
    c.start();
    assertTrue(all.await(20, TimeUnit.SECONDS), "listener saw " + seen);
    c.stop();
    assertEquals(List.of("l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7"), seen.stream().sorted().toList());
    long until = System.currentTimeMillis() + 5000;
    while (Jms.depth(name)[1] > 0 && System.currentTimeMillis() < until) Thread.sleep(100);
    assertArrayEquals(new int[] {0, 0}, Jms.depth(name));
  }

  @Test
  void clientAcknowledgeLeavesUnackedMessagesToComeBack() throws Exception {
    SQSConnection c = connect(0);
    String name = queue(c, "jms-ack", Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "2"));
    Session s = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
    var producer = s.createProducer(s.createQueue(name));
    producer.send(s.createTextMessage("kept"));
    producer.send(s.createTextMessage("acked"));
    MessageConsumer consumer = s.createConsumer(s.createQueue(name));
    c.start();
    Message first = consumer.receive(5000);
    Message second = consumer.receive(5000);
    assertNotNull(first);
    assertNotNull(second);
    // CLIENT_ACKNOWLEDGE acknowledges everything the session received up to this message,
    // so acknowledge neither yet; UNORDERED_ACKNOWLEDGE below acknowledges one.
    assertArrayEquals(new int[] {0, 2}, Jms.depth(name));
    // Unacknowledged: both come back once the 2 s visibility timeout passes.
    List<String> again = new ArrayList<>();
    Message m;
    while (again.size() < 2 && (m = consumer.receive(6000)) != null) {
      assertTrue(m.getJMSRedelivered(), "redelivered flag");
      assertEquals(2, m.getIntProperty("JMSXDeliveryCount"));
      again.add(((TextMessage) m).getText());
      if (again.size() == 2) m.acknowledge(); // acknowledges both
    }
    assertEquals(List.of("acked", "kept"), again.stream().sorted().toList());
    assertArrayEquals(new int[] {0, 0}, Jms.depth(name));

    // UNORDERED_ACKNOWLEDGE: one message acknowledged, the other comes back.
    Session u = c.createSession(false, SQSSession.UNORDERED_ACKNOWLEDGE);
    var p2 = u.createProducer(u.createQueue(name));
    p2.send(u.createTextMessage("one"));
    p2.send(u.createTextMessage("two"));
    MessageConsumer c2 = u.createConsumer(u.createQueue(name));
    Message a = c2.receive(5000);
    Message b = c2.receive(5000);
    a.acknowledge();
    String left = ((TextMessage) b).getText();
    Message back = c2.receive(6000);
    assertNotNull(back, "the unacknowledged message did not come back");
    assertEquals(left, ((TextMessage) back).getText());
    back.acknowledge();
    assertNull(c2.receive(3000), "an acknowledged message came back");
  }

  @Test
  void autoAcknowledgedMessageDoesNotComeBack() throws Exception {
    SQSConnection c = connect(0);
    String name = queue(c, "jms-auto", Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "1"));
    Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
    s.createProducer(s.createQueue(name)).send(s.createTextMessage("once"));
    MessageConsumer consumer = s.createConsumer(s.createQueue(name));
    c.start();
    assertEquals("once", ((TextMessage) consumer.receive(5000)).getText());
    assertNull(consumer.receive(3000));
  }

  record Order(String id, int qty, List<String> items) implements Serializable {}

  @Test
  void textBytesAndObjectMessages() throws Exception {
    SQSConnection c = connect(0);
    String name = queue(c, "jms-types", Map.of());
    Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
    var producer = s.createProducer(s.createQueue(name));
    producer.send(s.createTextMessage("text"));
    BytesMessage bytes = s.createBytesMessage();
    byte[] payload = new byte[300];
    for (int i = 0; i < payload.length; i++) payload[i] = (byte) i;
    bytes.writeBytes(payload);
    producer.send(bytes);
    producer.send(s.createObjectMessage(new Order("o-1", 3, List.of("a", "b"))));

    MessageConsumer consumer = s.createConsumer(s.createQueue(name));
    c.start();
    int seen = 0;
    for (int i = 0; i < 3; i++) {
      Message m = consumer.receive(5000);
      assertNotNull(m);
      if (m instanceof TextMessage t) {
        assertEquals("text", t.getText());
        seen |= 1;
      } else if (m instanceof BytesMessage b) {
        byte[] back = new byte[(int) b.getBodyLength()];
        b.readBytes(back);
        assertArrayEquals(payload, back);
        seen |= 2;
      } else if (m instanceof ObjectMessage o) {
        assertEquals(new Order("o-1", 3, List.of("a", "b")), o.getObject());
        seen |= 4;
      }
    }
    assertEquals(7, seen, "one message of each type");
  }

  @Test
  void propertiesRoundTripAsTypedMessageAttributes() throws Exception {
    SQSConnection c = connect(0);
    String name = queue(c, "jms-props", Map.of());
    Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
    TextMessage m = s.createTextMessage("props");
    m.setStringProperty("s", "str \u00e9");
    m.setIntProperty("i", -42);
    m.setLongProperty("l", 1L << 40);
    m.setBooleanProperty("b", true);
    m.setDoubleProperty("d", 2.5);
    m.setFloatProperty("f", 0.25f);
    m.setShortProperty("sh", (short) 7);
    m.setByteProperty("by", (byte) -3);
    s.createProducer(s.createQueue(name)).send(m);

    // On the wire: SQS message attributes with the library's typed data types.
    var raw =
        Jms.SQS.receiveMessage(b -> b.queueUrl(Jms.url(name)).messageAttributeNames("All").waitTimeSeconds(2))
            .messages()
            .get(0);
    var a = raw.messageAttributes();
    assertEquals("String", a.get("s").dataType());
    assertEquals("Number.int", a.get("i").dataType());
    assertEquals("-42", a.get("i").stringValue());
    assertEquals("Number.long", a.get("l").dataType());
    assertEquals("Number.Boolean", a.get("b").dataType());
    assertEquals("Number.double", a.get("d").dataType());
    assertEquals("Number.float", a.get("f").dataType());
    assertEquals("Number.short", a.get("sh").dataType());
    assertEquals("Number.byte", a.get("by").dataType());
    Jms.SQS.changeMessageVisibility(b -> b.queueUrl(Jms.url(name)).receiptHandle(raw.receiptHandle()).visibilityTimeout(0));

    MessageConsumer consumer = s.createConsumer(s.createQueue(name));
    c.start();
    Message got = consumer.receive(5000);
    assertNotNull(got);
    assertEquals("str \u00e9", got.getStringProperty("s"));
    assertEquals(-42, got.getIntProperty("i"));
    assertEquals(1L << 40, got.getLongProperty("l"));
    assertTrue(got.getBooleanProperty("b"));
    assertEquals(2.5, got.getDoubleProperty("d"));
    assertEquals(0.25f, got.getFloatProperty("f"));
    assertEquals((short) 7, got.getShortProperty("sh"));
    assertEquals((byte) -3, got.getByteProperty("by"));
    assertEquals(Integer.class, got.getObjectProperty("i").getClass());
  }

  @Test
  void fifoQueueGroupsDeduplicationAndSequenceNumbers() throws Exception {
    SQSConnection c = connect(0);
    String name = queue(c, "jms-fifo", Map.of(QueueAttributeName.FIFO_QUEUE, "true"));
    Session s = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
    var producer = s.createProducer(s.createQueue(name));
    List<Long> seqs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      for (String g : List.of("g1", "g2")) {
        TextMessage m = s.createTextMessage(g + ":" + i);
        m.setStringProperty("JMSXGroupID", g);
        m.setStringProperty("JMS_SQS_DeduplicationId", g + "-" + i);
        producer.send(m);
        seqs.add(Long.parseLong(m.getStringProperty("JMS_SQS_SequenceNumber")));
      }
    }
    assertEquals(seqs.stream().sorted().toList(), seqs, "sequence numbers grow");
    TextMessage dup = s.createTextMessage("g1:0 again");
    dup.setStringProperty("JMSXGroupID", "g1");
    dup.setStringProperty("JMS_SQS_DeduplicationId", "g1-0");
    producer.send(dup);

    MessageConsumer consumer = s.createConsumer(s.createQueue(name));
    c.start();
    List<String> g1 = new ArrayList<>();
    List<String> g2 = new ArrayList<>();
    Message m;
    while ((m = consumer.receive(3000)) != null) {
      String body = ((TextMessage) m).getText();
      String group = m.getStringProperty("JMSXGroupID");
      assertEquals(body.substring(0, 2), group);
      assertNotNull(m.getStringProperty("JMS_SQS_SequenceNumber"));
      (group.equals("g1") ? g1 : g2).add(body);
      m.acknowledge(); // frees the group for its next message
    }
    assertEquals(List.of("g1:0", "g1:1", "g1:2", "g1:3", "g1:4"), g1);
    assertEquals(List.of("g2:0", "g2:1", "g2:2", "g2:3", "g2:4"), g2);
  }
}
