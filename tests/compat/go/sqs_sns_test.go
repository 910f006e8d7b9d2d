// The AWS SDK for Go v2 against a running queen-sqs endpoint (QUEEN_SQS_ENDPOINT), as
// its own documentation shows it used: one config, a BaseEndpoint, static credentials.
// SQS speaks AWS JSON 1.0 here, SNS the Query protocol; the SDK verifies the MD5 of
// every body it sends and receives.
package compat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

func clients(t *testing.T) (*sqs.Client, *sns.Client) {
	t.Helper()
	endpoint := os.Getenv("QUEEN_SQS_ENDPOINT")
	if endpoint == "" {
		t.Fatal("QUEEN_SQS_ENDPOINT is not set (scripts/compat.sh sets it)")
	}
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")),
	)
	if err != nil {
		t.Fatal(err)
	}
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
	n := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(endpoint) })
	return q, n
}

func unique(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
}

func mustQueue(t *testing.T, q *sqs.Client, name string, attrs map[string]string) string {
	t.Helper()
	out, err := q.CreateQueue(context.Background(), &sqs.CreateQueueInput{
		QueueName: aws.String(name), Attributes: attrs,
	})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	return *out.QueueUrl
}

func TestQueuesAndAttributes(t *testing.T) {
	q, _ := clients(t)
	ctx := context.Background()
	name := unique("go-attrs")
	url := mustQueue(t, q, name, map[string]string{"VisibilityTimeout": "45"})

	got, err := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil || *got.QueueUrl != url {
		t.Fatalf("GetQueueUrl: %v %v", got, err)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	if attrs.Attributes["VisibilityTimeout"] != "45" || attrs.Attributes["QueueArn"] == "" {
		t.Fatalf("attributes: %v", attrs.Attributes)
	}
	if _, err := q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{
		QueueUrl: aws.String(url), Attributes: map[string]string{"DelaySeconds": "0", "MaximumMessageSize": "2048"},
	}); err != nil {
		t.Fatal(err)
	}
	// A missing queue is the SDK's typed error.
	_, err = q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(unique("go-none"))})
	var missing *sqstypes.QueueDoesNotExist
	if !errors.As(err, &missing) {
		t.Fatalf("want QueueDoesNotExist, got %T %v", err, err)
	}
	if _, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)}); err != nil {
		t.Fatal(err)
	}
}

func TestSendReceiveDeleteWithEveryAttributeType(t *testing.T) {
	q, _ := clients(t)
	ctx := context.Background()
	url := mustQueue(t, q, unique("go-msgs"), nil)
	sent, err := q.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:    aws.String(url),
		MessageBody: aws.String("héllo from Go ✓"),
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{
			"s":   {DataType: aws.String("String"), StringValue: aws.String("text")},
			"n":   {DataType: aws.String("Number"), StringValue: aws.String("42.5")},
			"b":   {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, 254, 255}},
			"c":   {DataType: aws.String("String.custom"), StringValue: aws.String("x")},
			"bin": {DataType: aws.String("Binary.png"), BinaryValue: []byte("png")},
		},
		MessageSystemAttributes: map[string]sqstypes.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String("Root=1-5759e988-bd862e3fe1be46a994272793")},
		},
	})
	if err != nil {
		t.Fatal(err) // the SDK has already checked the three MD5s it was answered
	}
	if sent.MD5OfMessageAttributes == nil || sent.MD5OfMessageSystemAttributes == nil {
		t.Fatalf("digests missing: %+v", sent)
	}
	got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(url),
		MaxNumberOfMessages:         10,
		WaitTimeSeconds:             2,
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 {
		t.Fatalf("want 1 message, got %d", len(got.Messages))
	}
	m := got.Messages[0]
	if *m.MessageId != *sent.MessageId || *m.Body != "héllo from Go ✓" {
		t.Fatalf("message: %+v", m)
	}
	if string(m.MessageAttributes["b"].BinaryValue) != string([]byte{0, 1, 2, 254, 255}) ||
		*m.MessageAttributes["n"].StringValue != "42.5" || *m.MessageAttributes["c"].DataType != "String.custom" {
		t.Fatalf("attributes: %+v", m.MessageAttributes)
	}
	if m.Attributes["ApproximateReceiveCount"] != "1" || m.Attributes["AWSTraceHeader"] == "" {
		t.Fatalf("system attributes: %v", m.Attributes)
	}
	if _, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	// A handle this endpoint never minted is the typed error.
	_, err = q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String("bm90IGEgaGFuZGxl")})
	var bad *sqstypes.ReceiptHandleIsInvalid
	if !errors.As(err, &bad) {
		t.Fatalf("want ReceiptHandleIsInvalid, got %T %v", err, err)
	}
}

func TestBatchesAndTheirErrors(t *testing.T) {
	q, _ := clients(t)
	ctx := context.Background()
	url := mustQueue(t, q, unique("go-batch"), nil)
	var entries []sqstypes.SendMessageBatchRequestEntry
	for i := 0; i < 10; i++ {
		entries = append(entries, sqstypes.SendMessageBatchRequestEntry{
			Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(fmt.Sprintf("b%d", i)),
		})
	}
	out, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
	if err != nil || len(out.Successful) != 10 || len(out.Failed) != 0 {
		t.Fatalf("SendMessageBatch: %v %+v", err, out)
	}
	_, err = q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []sqstypes.SendMessageBatchRequestEntry{}})
	var empty *sqstypes.EmptyBatchRequest
	if !errors.As(err, &empty) {
		t.Fatalf("want EmptyBatchRequest, got %T %v", err, err)
	}
	dup := []sqstypes.SendMessageBatchRequestEntry{
		{Id: aws.String("x"), MessageBody: aws.String("1")}, {Id: aws.String("x"), MessageBody: aws.String("2")},
	}
	_, err = q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: dup})
	var notDistinct *sqstypes.BatchEntryIdsNotDistinct
	if !errors.As(err, &notDistinct) {
		t.Fatalf("want BatchEntryIdsNotDistinct, got %T %v", err, err)
	}
	deleted := 0
	deadline := time.Now().Add(20 * time.Second)
	for deleted < 10 && time.Now().Before(deadline) {
		got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		var del []sqstypes.DeleteMessageBatchRequestEntry
		for i, m := range got.Messages {
			del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(del) == 0 {
			continue
		}
		res, err := q.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: del})
		if err != nil || len(res.Failed) != 0 {
			t.Fatalf("DeleteMessageBatch: %v %+v", err, res)
		}
		deleted += len(res.Successful)
	}
	if deleted != 10 {
		t.Fatalf("deleted %d of 10", deleted)
	}
}

func TestFifoOrderAndDeduplication(t *testing.T) {
	q, _ := clients(t)
	ctx := context.Background()
	url := mustQueue(t, q, unique("go-fifo")+".fifo", map[string]string{"FifoQueue": "true"})
	var seqs []string
	var first string
	for i := 0; i < 5; i++ {
		out, err := q.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl: aws.String(url), MessageBody: aws.String(fmt.Sprintf("m%d", i)),
			MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(fmt.Sprintf("d%d", i)),
		})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = *out.MessageId
		}
		seqs = append(seqs, *out.SequenceNumber)
	}
	for i := 1; i < len(seqs); i++ {
		if len(seqs[i]) != 20 || seqs[i] <= seqs[i-1] {
			t.Fatalf("sequence numbers not increasing 20-digit strings: %v", seqs)
		}
	}
	again, err := q.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(url), MessageBody: aws.String("again"),
		MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d0"),
	})
	if err != nil || *again.MessageId != first {
		t.Fatalf("a repeated deduplication id answers the original: %v %v", again, err)
	}
	var bodies []string
	deadline := time.Now().Add(20 * time.Second)
	for len(bodies) < 5 && time.Now().Before(deadline) {
		got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got.Messages {
			bodies = append(bodies, *m.Body)
			if _, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fmt.Sprint(bodies) != "[m0 m1 m2 m3 m4]" {
		t.Fatalf("order: %v", bodies)
	}
}

func TestDeadLetterQueue(t *testing.T) {
	q, _ := clients(t)
	ctx := context.Background()
	dlq := mustQueue(t, q, unique("go-dlq"), nil)
	dlqAttrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(dlq), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		t.Fatal(err)
	}
	policy := fmt.Sprintf(`{"deadLetterTargetArn":"%s","maxReceiveCount":"2"}`, dlqAttrs.Attributes["QueueArn"])
	// In Go a zero VisibilityTimeout is "not set": the queue's 1 s visibility lets each
	// receive that does not delete give the message back.
	src := mustQueue(t, q, unique("go-src"), map[string]string{"RedrivePolicy": policy, "VisibilityTimeout": "1"})
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(src), MessageBody: aws.String("poison")}); err != nil {
		t.Fatal(err)
	}
	// Two receives that never delete, then a third finds it past maxReceiveCount and moves it.
	delivered := 0
	for i := 0; i < 3; i++ {
		got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(src), WaitTimeSeconds: 3})
		if err != nil {
			t.Fatal(err)
		}
		delivered += len(got.Messages)
		time.Sleep(1100 * time.Millisecond)
	}
	if delivered != 2 {
		t.Fatalf("delivered %d times before the move, want 2", delivered)
	}
	got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(dlq), WaitTimeSeconds: 2,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || *got.Messages[0].Body != "poison" {
		t.Fatalf("dead-letter queue: %+v", got.Messages)
	}
	if n, _ := strconv.Atoi(got.Messages[0].Attributes["ApproximateReceiveCount"]); n < 3 {
		t.Fatalf("a dead-lettered copy carries its count: %v", got.Messages[0].Attributes)
	}
	sources, err := q.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(dlq)})
	if err != nil || len(sources.QueueUrls) != 1 || sources.QueueUrls[0] != src {
		t.Fatalf("ListDeadLetterSourceQueues: %v %v", sources, err)
	}
}

func TestSnsFanOutToQueues(t *testing.T) {
	q, n := clients(t)
	ctx := context.Background()
	topic, err := n.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(unique("go-topic"))})
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for i := 0; i < 2; i++ {
		url := mustQueue(t, q, unique(fmt.Sprintf("go-sub%d", i)), nil)
		a, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Subscribe(ctx, &sns.SubscribeInput{
			TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(a.Attributes["QueueArn"]),
			Attributes: map[string]string{"RawMessageDelivery": "true"},
		}); err != nil {
			t.Fatal(err)
		}
		urls = append(urls, url)
	}
	pub, err := n.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("to everyone")})
	if err != nil || pub.MessageId == nil {
		t.Fatalf("Publish: %v %v", pub, err)
	}
	for _, url := range urls {
		got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != 1 || *got.Messages[0].Body != "to everyone" {
			t.Fatalf("%s: %+v", url, got.Messages)
		}
	}
	// SNS's own error: an unknown topic is NotFound.
	_, err = n.Publish(ctx, &sns.PublishInput{TopicArn: aws.String("arn:aws:sns:us-east-1:000000000000:nope"), Message: aws.String("x")})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NotFound" {
		t.Fatalf("want NotFound, got %T %v", err, err)
	}
}
