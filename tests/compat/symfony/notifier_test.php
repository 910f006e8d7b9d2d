<?php
// Symfony Notifier's Amazon SNS bridge (Debian's php-symfony-amazon-sns-notifier 5.4,
// async-aws/sns underneath) against the endpoint (QUEEN_SQS_ENDPOINT, set by
// scripts/frameworks.sh): the notifier publishes to a topic that fans out to SQS queues.
// The bridge's factory (AmazonSnsTransportFactory, 5.4.53) builds the endpoint as
// 'https://' + the DSN's host, so a DSN cannot name a plain-HTTP endpoint; the transport is
// built the way an application's service container wires it instead: an AmazonSnsTransport
// around an async-aws SnsClient given the endpoint. Topics, queues and subscriptions are set
// up with async-aws clients; what the queues hold is read back with the SQS client. Each case
// prints a TAP line, and the exit status is non-zero if any case failed.

require_once '/usr/share/php/Symfony/Component/Notifier/autoload.php';
require_once '/usr/share/php/Symfony/Component/Notifier/Bridge/AmazonSns/autoload.php';
require_once '/usr/share/php/Symfony/Component/EventDispatcher/autoload.php';
require_once '/usr/share/php/AsyncAws/Sqs/autoload.php';

use AsyncAws\Sns\Exception\NotFoundException;
use AsyncAws\Sns\SnsClient;
use AsyncAws\Sqs\SqsClient;
use Symfony\Component\EventDispatcher\EventDispatcher;
use Symfony\Component\Notifier\Bridge\AmazonSns\AmazonSnsOptions;
use Symfony\Component\Notifier\Bridge\AmazonSns\AmazonSnsTransport;
use Symfony\Component\Notifier\Channel\ChatChannel;
use Symfony\Component\Notifier\Chatter;
use Symfony\Component\Notifier\Event\SentMessageEvent;
use Symfony\Component\Notifier\Exception\TransportException;
use Symfony\Component\Notifier\Message\ChatMessage;
use Symfony\Component\Notifier\Notification\ChatNotificationInterface;
use Symfony\Component\Notifier\Notification\Notification;
use Symfony\Component\Notifier\Notifier;
use Symfony\Component\Notifier\Recipient\RecipientInterface;
use Symfony\Component\Notifier\Transport\Transports;

/** A notification as applications write them for a chat transport that needs its own options. */
final class TopicNotification extends Notification implements ChatNotificationInterface
{
    private $topicArn;

    public function __construct(string $subject, string $topicArn)
    {
        parent::__construct($subject, ['chat/sns']);
        $this->topicArn = $topicArn;
    }

    public function asChatMessage(RecipientInterface $recipient, ?string $transport = null): ?ChatMessage
    {
        return new ChatMessage($this->getSubject(), (new AmazonSnsOptions($this->topicArn))->subject('Notifier'));
    }
}

$endpoint = getenv('QUEEN_SQS_ENDPOINT') ?: exit("QUEEN_SQS_ENDPOINT is not set (scripts/frameworks.sh sets it)\n");
$run = 'sn' . bin2hex(random_bytes(4));
$config = [
    'endpoint' => $endpoint,
    'region' => 'us-east-1',
    'accessKeyId' => getenv('AWS_ACCESS_KEY_ID') ?: 'test',
    'accessKeySecret' => getenv('AWS_SECRET_ACCESS_KEY') ?: 'test',
];
$sns = new SnsClient($config);
$sqs = new SqsClient($config);

// What Symfony's SentMessageEvent reported for each send through the transport below.
$sentIds = [];
$events = new EventDispatcher();
$events->addListener(SentMessageEvent::class, function (SentMessageEvent $event) use (&$sentIds) {
    $sentIds[] = $event->getMessage()->getMessageId();
});
// The bridge's transport as a service container wires it: the SnsClient is the only place
// the endpoint is named.
$transport = new AmazonSnsTransport(new SnsClient($config), null, $events);
$chatter = new Chatter(new Transports(['sns' => $transport]));

require_once __DIR__ . '/tap.php';

/** A topic named $name with queue $name subscribed to it; returns [topic ARN, queue URL]. */
function fanout(string $name, array $subscription = [], array $topic = [], array $queue = []): array
{
    global $sns, $sqs;
    $topicArn = $sns->createTopic(['Name' => $name, 'Attributes' => $topic])->getTopicArn();
    $queueUrl = $sqs->createQueue(['QueueName' => $name, 'Attributes' => $queue])->getQueueUrl();
    $queueArn = $sqs->getQueueAttributes(['QueueUrl' => $queueUrl, 'AttributeNames' => ['QueueArn']])->getAttributes()['QueueArn'];
    $sns->subscribe(['TopicArn' => $topicArn, 'Protocol' => 'sqs', 'Endpoint' => $queueArn, 'Attributes' => $subscription])->getSubscriptionArn();
    return [$topicArn, $queueUrl];
}

/** Up to $count messages from $queueUrl within $seconds, each deleted once read. */
function drain(string $queueUrl, int $count, float $seconds = 10): array
{
    global $sqs;
    $got = [];
    $deadline = microtime(true) + $seconds;
    while (count($got) < $count && microtime(true) < $deadline) {
        $result = $sqs->receiveMessage([
            'QueueUrl' => $queueUrl,
            'MaxNumberOfMessages' => 10,
            'WaitTimeSeconds' => 1,
            'MessageAttributeNames' => ['All'],
        ]);
        foreach ($result->getMessages() as $m) {
            $got[] = $m;
            $sqs->deleteMessage(['QueueUrl' => $queueUrl, 'ReceiptHandle' => $m->getReceiptHandle()]);
        }
    }
    return $got;
}

/** The one message $queueUrl receives, after which it holds nothing more. */
function only(string $queueUrl): \AsyncAws\Sqs\ValueObject\Message
{
    $got = drain($queueUrl, 1);
    expect(count($got) === 1, 'one message in the queue, got ' . count($got));
    $more = drain($queueUrl, 1, 1.5);
    expect($more === [], 'nothing more in the queue, got ' . json_encode(array_map(fn ($m) => $m->getBody(), $more)));
    return $got[0];
}

/** The SNS notification envelope a subscribed queue holds, decoded. */
function envelope(\AsyncAws\Sqs\ValueObject\Message $m): array
{
    $e = json_decode($m->getBody(), true);
    expect(is_array($e), 'a JSON envelope, got ' . $m->getBody());
    expect(($e['Type'] ?? null) === 'Notification', 'Type Notification, got ' . json_encode($e['Type'] ?? null));
    foreach (['MessageId', 'TopicArn', 'Message', 'Timestamp', 'SignatureVersion', 'Signature', 'SigningCertURL', 'UnsubscribeURL'] as $key) {
        expect(isset($e[$key]), "the envelope's $key");
    }
    return $e;
}

$subject = "Déploiement ✓ terminé: <&> \"quoted\" 🚀\nline two";
[$alerts, $inbox] = fanout("$run-alerts");

check('a ChatMessage sent through the Chatter arrives in the queue as an SNS notification of that topic', function () use ($chatter, $alerts, $inbox, $subject, &$sentIds) {
    $sentIds = [];
    $sent = $chatter->send(new ChatMessage($subject, (new AmazonSnsOptions($alerts))->subject('Deploy')));
    expect($sent !== null && is_string($sent->getMessageId()) && $sent->getMessageId() !== '', 'a SentMessage with a message id');
    expect($sentIds === [$sent->getMessageId()], "Symfony's SentMessageEvent with the same id, got " . json_encode($sentIds));
    $e = envelope(only($inbox));
    expect($e['Message'] === $subject, 'Message is the subject, got ' . json_encode($e['Message']));
    expect($e['TopicArn'] === $alerts, "TopicArn $alerts, got {$e['TopicArn']}");
    expect($e['MessageId'] === $sent->getMessageId(), "MessageId {$sent->getMessageId()}, got {$e['MessageId']}");
    expect(($e['Subject'] ?? null) === 'Deploy', "Subject Deploy (AmazonSnsOptions::subject), got " . json_encode($e['Subject'] ?? null));
});

check('the Notifier sends a Notification through its chat channel (chat/sns) to the topic', function () use ($transport, $alerts, $inbox, &$sentIds) {
    $sentIds = [];
    $notifier = new Notifier(['chat' => new ChatChannel(new Transports(['sns' => $transport]))]);
    $notifier->send(new TopicNotification('disk almost full on db-1', $alerts));
    expect(count($sentIds) === 1 && is_string($sentIds[0]), 'one SentMessageEvent with an id, got ' . json_encode($sentIds));
    $e = envelope(only($inbox));
    expect($e['Message'] === 'disk almost full on db-1', 'Message is the notification subject, got ' . json_encode($e['Message']));
    expect($e['TopicArn'] === $alerts, "TopicArn $alerts, got {$e['TopicArn']}");
    expect($e['MessageId'] === $sentIds[0], "MessageId {$sentIds[0]}, got {$e['MessageId']}");
    expect(($e['Subject'] ?? null) === 'Notifier', 'Subject Notifier, got ' . json_encode($e['Subject'] ?? null));
});

$attributes = [
    'team' => ['DataType' => 'String', 'StringValue' => 'ops ✓'],
    'priority' => ['DataType' => 'Number', 'StringValue' => '7'],
    'digest' => ['DataType' => 'Binary', 'BinaryValue' => "\x00\xff\x10 bin"],
];

check('message attributes given in AmazonSnsOptions arrive in the envelope', function () use ($chatter, $alerts, $inbox, $attributes) {
    $sent = $chatter->send(new ChatMessage('with attributes', new AmazonSnsOptions($alerts, ['MessageAttributes' => $attributes])));
    $e = envelope(only($inbox));
    expect($e['Message'] === 'with attributes', 'Message is the subject, got ' . json_encode($e['Message']));
    expect($e['MessageId'] === $sent->getMessageId(), 'MessageId is the SentMessage\'s');
    $want = [
        'team' => ['Type' => 'String', 'Value' => 'ops ✓'],
        'priority' => ['Type' => 'Number', 'Value' => '7'],
        'digest' => ['Type' => 'Binary', 'Value' => base64_encode("\x00\xff\x10 bin")],
    ];
    $got = $e['MessageAttributes'] ?? null;
    if (is_array($got)) {
        ksort($got);
    }
    ksort($want);
    expect($got === $want, 'MessageAttributes ' . json_encode($want) . ', got ' . json_encode($got));
});

check('with RawMessageDelivery the body arrives raw and the attributes as SQS message attributes', function () use ($chatter, $run, $subject, $attributes) {
    [$topic, $queue] = fanout("$run-raw", ['RawMessageDelivery' => 'true']);
    $chatter->send(new ChatMessage($subject, new AmazonSnsOptions($topic, ['MessageAttributes' => $attributes])));
    $m = only($queue);
    expect($m->getBody() === $subject, 'the subject as the body, got ' . json_encode($m->getBody()));
    $got = [];
    foreach ($m->getMessageAttributes() as $name => $v) {
        $got[$name] = [$v->getDataType(), $v->getDataType() === 'Binary' ? $v->getBinaryValue() : $v->getStringValue()];
    }
    ksort($got);
    $want = ['digest' => ['Binary', "\x00\xff\x10 bin"], 'priority' => ['Number', '7'], 'team' => ['String', 'ops ✓']];
    expect($got === $want, 'attributes ' . json_encode(array_map(fn ($a) => [$a[0], base64_encode($a[1])], $want))
        . ', got ' . json_encode(array_map(fn ($a) => [$a[0], base64_encode((string) $a[1])], $got)));
});

check('AmazonSnsOptions::messageStructure(\'json\') delivers the subject\'s "sqs" entry', function () use ($chatter, $alerts, $inbox) {
    $structured = json_encode(['default' => 'for everyone', 'sqs' => 'for queues only', 'email' => 'for mail']);
    $sent = $chatter->send(new ChatMessage($structured, (new AmazonSnsOptions($alerts))->messageStructure('json')));
    $e = envelope(only($inbox));
    expect($e['Message'] === 'for queues only', 'the sqs entry as Message, got ' . json_encode($e['Message']));
    expect($e['MessageId'] === $sent->getMessageId(), 'MessageId is the SentMessage\'s');
});

check('a FIFO topic: MessageGroupId and MessageDeduplicationId in the options keep order and drop a repeat', function () use ($chatter, $run) {
    [$topic, $queue] = fanout("$run-orders.fifo", ['RawMessageDelivery' => 'true'], ['FifoTopic' => 'true'], ['FifoQueue' => 'true']);
    foreach (['a', 'b', 'c', 'd', 'b'] as $k) {
        $chatter->send(new ChatMessage("order $k", new AmazonSnsOptions($topic, ['MessageGroupId' => 'g1', 'MessageDeduplicationId' => "dedup-$k"])));
    }
    $got = array_map(fn ($m) => $m->getBody(), drain($queue, 5, 5));
    expect($got === ['order a', 'order b', 'order c', 'order d'], 'order a..d once each, in order, got ' . json_encode($got));
});

check('a publish to a topic that does not exist fails with Symfony\'s TransportException (NotFound)', function () use ($chatter, $alerts, $run, $inbox) {
    $missing = preg_replace('/[^:]+$/', "$run-missing", $alerts);
    try {
        $chatter->send(new ChatMessage('nowhere', new AmazonSnsOptions($missing)));
        throw new \RuntimeException('expected: a TransportException, the send succeeded');
    } catch (TransportException $e) {
        expect($e->getCode() === 404, 'the HTTP status 404 as its code, got ' . $e->getCode());
        expect($e->getResponse()->getStatusCode() === 404, 'its response a 404');
        $previous = $e->getPrevious();
        expect($previous instanceof NotFoundException, 'async-aws\'s NotFoundException underneath, got ' . get_class($previous ?? $e));
        expect($previous->getAwsCode() === 'NotFound', 'AWS code NotFound, got ' . $previous->getAwsCode());
    }
    expect(drain($inbox, 1, 1.5) === [], 'nothing published to the existing topic');
});

// Clean up the topics (their subscriptions with them) and queues of this run.
foreach (["$run-alerts", "$run-raw", "$run-orders.fifo"] as $name) {
    try {
        $sns->deleteTopic(['TopicArn' => preg_replace('/[^:]+$/', $name, $alerts)])->resolve();
    } catch (\Throwable $e) {
        printf("# cleanup: topic %s: %s\n", $name, $e->getMessage());
    }
}
foreach ($sqs->listQueues(['QueueNamePrefix' => $run])->getQueueUrls() as $url) {
    $sqs->deleteQueue(['QueueUrl' => $url]);
}

finish();
