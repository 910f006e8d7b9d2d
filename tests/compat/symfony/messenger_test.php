<?php
// Symfony Messenger's Amazon SQS transport (Debian's php-symfony-amazon-sqs-messenger 5.4,
// async-aws/sqs underneath) against the endpoint (QUEEN_SQS_ENDPOINT, set by
// scripts/frameworks.sh). The transport is configured by DSN, as Symfony documents:
// sqs://HOST:PORT/QUEUE?sslmode=disable&access_key=..&secret_key=.. ; the queue is created by
// the transport's auto-setup. A Worker with Symfony's own retry and failure-transport
// listeners consumes; each case prints a TAP line, and the exit status is non-zero if any
// case failed.

require_once '/usr/share/php/Symfony/Component/Messenger/autoload.php';
require_once '/usr/share/php/Symfony/Component/Messenger/Bridge/AmazonSqs/autoload.php';
require_once '/usr/share/php/Symfony/Component/EventDispatcher/autoload.php';

use Psr\Container\ContainerInterface;
use Symfony\Component\EventDispatcher\EventDispatcher;
use Symfony\Component\Messenger\Bridge\AmazonSqs\Transport\AmazonSqsFifoStamp;
use Symfony\Component\Messenger\Bridge\AmazonSqs\Transport\AmazonSqsTransportFactory;
use Symfony\Component\Messenger\Envelope;
use Symfony\Component\Messenger\EventListener\SendFailedMessageForRetryListener;
use Symfony\Component\Messenger\EventListener\SendFailedMessageToFailureTransportListener;
use Symfony\Component\Messenger\EventListener\StopWorkerOnMessageLimitListener;
use Symfony\Component\Messenger\EventListener\StopWorkerOnTimeLimitListener;
use Symfony\Component\Messenger\Handler\HandlersLocator;
use Symfony\Component\Messenger\MessageBus;
use Symfony\Component\Messenger\Middleware\HandleMessageMiddleware;
use Symfony\Component\Messenger\Retry\MultiplierRetryStrategy;
use Symfony\Component\Messenger\Stamp\DelayStamp;
use Symfony\Component\Messenger\Stamp\RedeliveryStamp;
use Symfony\Component\Messenger\Transport\Serialization\PhpSerializer;
use Symfony\Component\Messenger\Transport\TransportInterface;
use Symfony\Component\Messenger\Worker;

/** A message as applications write them: private state, so its serialized form holds NUL bytes. */
final class Job
{
    private $key;
    private $payload;

    public function __construct(string $key, string $payload = '')
    {
        $this->key = $key;
        $this->payload = $payload;
    }

    public function key(): string
    {
        return $this->key;
    }

    public function payload(): string
    {
        return $this->payload;
    }
}

/** The smallest PSR-11 container: what Symfony's listeners look senders and strategies up in. */
final class Services implements ContainerInterface
{
    private $items;

    public function __construct(array $items)
    {
        $this->items = $items;
    }

    public function get(string $id)
    {
        if (!isset($this->items[$id])) {
            throw new \InvalidArgumentException("no service $id");
        }
        return $this->items[$id];
    }

    public function has(string $id): bool
    {
        return isset($this->items[$id]);
    }
}

$endpoint = getenv('QUEEN_SQS_ENDPOINT') ?: exit("QUEEN_SQS_ENDPOINT is not set (scripts/frameworks.sh sets it)\n");
$parts = parse_url($endpoint);
$run = 'sy' . bin2hex(random_bytes(4));

function transport(string $queue, array $options = []): TransportInterface
{
    global $parts;
    $query = http_build_query(array_merge([
        'sslmode' => 'disable',
        'access_key' => getenv('AWS_ACCESS_KEY_ID') ?: 'test',
        'secret_key' => getenv('AWS_SECRET_ACCESS_KEY') ?: 'test',
        'region' => 'us-east-1',
        'wait_time' => 1,
    ], $options));
    $dsn = "sqs://{$parts['host']}:{$parts['port']}/$queue?$query";
    return (new AmazonSqsTransportFactory())->createTransport($dsn, [], new PhpSerializer());
}

/**
 * Runs a Worker on $transport (named 'main'; 'failed' is the failure transport, if any)
 * until $messages were handled or $seconds passed. $handler gets each Job.
 */
function work(TransportInterface $transport, callable $handler, int $messages, int $seconds, ?TransportInterface $failed = null, int $maxRetries = 3): void
{
    $bus = new MessageBus([new HandleMessageMiddleware(new HandlersLocator([Job::class => [$handler]]))]);
    $events = new EventDispatcher();
    $events->addSubscriber(new StopWorkerOnMessageLimitListener($messages));
    $events->addSubscriber(new StopWorkerOnTimeLimitListener($seconds));
    $events->addSubscriber(new SendFailedMessageForRetryListener(
        new Services(['main' => $transport]),
        new Services(['main' => new MultiplierRetryStrategy($maxRetries, 1000, 1)])
    ));
    if ($failed !== null) {
        $events->addSubscriber(new SendFailedMessageToFailureTransportListener(new Services(['main' => $failed])));
    }
    (new Worker(['main' => $transport], $bus, $events))->run(['sleep' => 100000]);
}

require_once __DIR__ . '/tap.php';

check('every dispatched message is handled once, and the queue is left empty', function () use ($run) {
    $t = transport("$run-work");
    for ($i = 0; $i < 20; $i++) {
        $t->send(new Envelope(new Job("k$i", "héllo ✓ \0 <&>")));
    }
    $seen = [];
    work($t, function (Job $job) use (&$seen) {
        $seen[] = $job->key();
        expect($job->payload() === "héllo ✓ \0 <&>", 'the payload as sent');
    }, 20, 60);
    sort($seen, SORT_NATURAL);
    expect($seen === array_map(fn ($i) => "k$i", range(0, 19)), 'k0..k19 once each, got ' . json_encode($seen));
    expect($t->getMessageCount() === 0, 'no message left, got ' . $t->getMessageCount());
});

check('a DelayStamp holds a message back by its delay', function () use ($run) {
    $t = transport("$run-delay");
    $sent = microtime(true);
    $t->send(new Envelope(new Job('late'), [new DelayStamp(3000)]));
    $t->send(new Envelope(new Job('now')));
    $at = [];
    work($t, function (Job $job) use (&$at) {
        $at[$job->key()] = microtime(true);
    }, 2, 30);
    expect(isset($at['now'], $at['late']), 'both handled');
    expect($at['now'] - $sent < 2.5, 'the undelayed message at once');
    expect($at['late'] - $sent >= 2.8, sprintf('the delayed message after 3 s, was %.2f s', $at['late'] - $sent));
});

check('a failing handler is retried by Symfony\'s retry listener until it succeeds', function () use ($run) {
    $t = transport("$run-retry");
    $t->send(new Envelope(new Job('flaky')));
    $attempts = 0;
    work($t, function (Job $job) use (&$attempts) {
        $attempts++;
        if ($attempts < 3) {
            throw new \RuntimeException("attempt $attempts fails");
        }
    }, 3, 60);
    expect($attempts === 3, "three attempts, got $attempts");
    expect($t->getMessageCount() === 0, 'no message left, got ' . $t->getMessageCount());
});

check('a message out of retries goes to the failure transport with its redelivery stamps', function () use ($run) {
    $t = transport("$run-doomed");
    $failed = transport("$run-failed");
    $t->send(new Envelope(new Job('doomed')));
    $attempts = 0;
    work($t, function (Job $job) use (&$attempts) {
        $attempts++;
        throw new \RuntimeException('never works');
    }, 2, 60, $failed, 1);
    expect($attempts === 2, "one try and one retry, got $attempts");
    $got = [];
    $deadline = microtime(true) + 10;
    while (!$got && microtime(true) < $deadline) {
        $got = iterator_to_array($failed->get());
    }
    expect(count($got) === 1, 'one envelope in the failure transport, got ' . count($got));
    $envelope = $got[0];
    expect($envelope->getMessage()->key() === 'doomed', 'the same message');
    expect($envelope->last(RedeliveryStamp::class) !== null, 'a redelivery stamp');
    $failed->ack($envelope);
    expect($t->getMessageCount() === 0, 'nothing left in the main queue');
});

check('a FIFO queue keeps the order of a message group and drops a duplicate', function () use ($run) {
    $t = transport("$run-orders.fifo");
    foreach (['a', 'b', 'c', 'd'] as $k) {
        $t->send(new Envelope(new Job($k), [new AmazonSqsFifoStamp('group-1', "dedup-$k")]));
    }
    $t->send(new Envelope(new Job('b-again'), [new AmazonSqsFifoStamp('group-1', 'dedup-b')]));
    $order = [];
    work($t, function (Job $job) use (&$order) {
        $order[] = $job->key();
    }, 4, 30);
    expect($order === ['a', 'b', 'c', 'd'], 'a, b, c, d: got ' . json_encode($order));
    // The duplicate was dropped: nothing else arrives.
    $more = iterator_to_array($t->get());
    expect($more === [], 'no duplicate, got ' . count($more));
});

// Clean up the queues of this run.
$client = new AsyncAws\Sqs\SqsClient([
    'endpoint' => $endpoint,
    'region' => 'us-east-1',
    'accessKeyId' => getenv('AWS_ACCESS_KEY_ID') ?: 'test',
    'accessKeySecret' => getenv('AWS_SECRET_ACCESS_KEY') ?: 'test',
]);
foreach ($client->listQueues(['QueueNamePrefix' => $run])->getQueueUrls() as $url) {
    $client->deleteQueue(['QueueUrl' => $url]);
}

finish();
