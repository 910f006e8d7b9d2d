// KEDA's SQS scaler (github.com/kedacore/keda/v2, the `aws-sqs-queue` trigger) against a
// running queen-sqs endpoint (QUEEN_SQS_ENDPOINT), built the way KEDA's operator builds it
// from a ScaledObject: trigger metadata with `awsEndpoint`, static keys as auth params. The
// scaler reads ApproximateNumberOfMessages (+ ...NotVisible with scaleOnInFlight, +
// ...Delayed with scaleOnDelayed) and reports a metric and whether the workload is active.
package compat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/kedacore/keda/v2/pkg/scalers"
	"github.com/kedacore/keda/v2/pkg/scalers/scalersconfig"
)

func endpoint(t *testing.T) string {
	t.Helper()
	e := os.Getenv("QUEEN_SQS_ENDPOINT")
	if e == "" {
		t.Fatal("QUEEN_SQS_ENDPOINT is not set (scripts/frameworks.sh sets it)")
	}
	return e
}

func client(t *testing.T) *sqs.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	if err != nil {
		t.Fatal(err)
	}
	e := endpoint(t)
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(e) })
}

// scaler is the scaler KEDA would build for a ScaledObject with this trigger metadata.
func scaler(t *testing.T, queueURL string, extra map[string]string) scalers.Scaler {
	t.Helper()
	meta := map[string]string{
		"queueURL":    queueURL,
		"queueLength": "5",
		"awsRegion":   "us-east-1",
		"awsEndpoint": endpoint(t),
	}
	for k, v := range extra {
		meta[k] = v
	}
	s, err := scalers.NewAwsSqsQueueScaler(context.Background(), &scalersconfig.ScalerConfig{
		TriggerMetadata:   meta,
		AuthParams:        map[string]string{"awsAccessKeyID": "test", "awsSecretAccessKey": "test"},
		TriggerUniqueKey:  fmt.Sprintf("%s-%v", queueURL, extra),
		GlobalHTTPTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatalf("NewAwsSqsQueueScaler: %v", err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// eventually waits (the counts are approximate, as on SQS) for the scaler to report want
// messages and the given activity.
func eventually(t *testing.T, s scalers.Scaler, want int64, active bool, what string) {
	t.Helper()
	name := s.GetMetricSpecForScaling(context.Background())[0].External.Metric.Name
	var got int64
	var isActive bool
	deadline := time.Now().Add(10 * time.Second)
	for {
		metrics, act, err := s.GetMetricsAndActivity(context.Background(), name)
		if err != nil {
			t.Fatalf("%s: GetMetricsAndActivity: %v", what, err)
		}
		got, isActive = metrics[0].Value.MilliValue()/1000, act
		if got == want && isActive == active {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the scaler reports %d messages (active %v), want %d (active %v)", what, got, isActive, want, active)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestTheScalerFollowsVisibleInFlightAndDelayedMessages(t *testing.T) {
	ctx := context.Background()
	q := client(t)
	name := fmt.Sprintf("keda-%d", time.Now().UnixNano())
	created, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	url := *created.QueueUrl
	defaults := scaler(t, url, nil) // scaleOnInFlight defaults to true, scaleOnDelayed to false
	visibleOnly := scaler(t, url, map[string]string{"scaleOnInFlight": "false"})
	withDelayed := scaler(t, url, map[string]string{"scaleOnDelayed": "true"})
	byName := scaler(t, name, map[string]string{"activationQueueLength": "4"})

	spec := defaults.GetMetricSpecForScaling(ctx)[0]
	if !strings.Contains(spec.External.Metric.Name, "aws-sqs-"+name) || spec.External.Target.AverageValue.Value() != 5 {
		t.Fatalf("metric spec: %+v / %+v", spec.External.Metric, spec.External.Target)
	}
	eventually(t, defaults, 0, false, "an empty queue")

	for i := 0; i < 5; i++ {
		if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(fmt.Sprintf("m%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("later"), DelaySeconds: 120}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, defaults, 5, true, "5 visible, 2 delayed")
	eventually(t, withDelayed, 7, true, "5 visible, 2 delayed, counting delayed")
	// A queue named instead of its URL; active only above the activation threshold of 4.
	eventually(t, byName, 5, true, "by name, 5 > activation 4")

	got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 3, VisibilityTimeout: 60})
	if err != nil || len(got.Messages) != 3 {
		t.Fatalf("receive 3: %v %+v", err, got)
	}
	eventually(t, defaults, 5, true, "2 visible + 3 in flight")
	eventually(t, visibleOnly, 2, true, "2 visible, in flight not counted")
	eventually(t, withDelayed, 7, true, "2 visible + 3 in flight + 2 delayed")

	for _, m := range got.Messages {
		if _, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, defaults, 2, true, "2 visible after the deletes")
	eventually(t, byName, 2, false, "by name, 2 <= activation 4")
	if _, err := q.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, withDelayed, 0, false, "purged (delayed messages too)")
}

func TestAMissingQueueIsAnErrorNotZero(t *testing.T) {
	s := scaler(t, strings.TrimSuffix(endpoint(t), "/")+"/000000000000/keda-no-such-queue", nil)
	name := s.GetMetricSpecForScaling(context.Background())[0].External.Metric.Name
	_, _, err := s.GetMetricsAndActivity(context.Background(), name)
	var missing *types.QueueDoesNotExist
	if !errors.As(err, &missing) {
		t.Fatalf("want QueueDoesNotExist, got %T %v", err, err)
	}
}
