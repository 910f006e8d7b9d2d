package main

// What the real-client suites do not reach: how the plugin takes its configuration, the
// refusals made before the core runs, an unknown cluster, and real randomness in every
// VM. The module is the debug build the lane makes (QUEEN_SQS_GATEWAY_WASM); no broker is
// needed, the cluster points at a closed port.
//
//	QUEEN_SQS_GATEWAY_WASM=target/wasm32-wasip1/debug/queen_sqs.wasm go test ./...

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func wasmBytes(t *testing.T) []byte {
	t.Helper()
	path := os.Getenv("QUEEN_SQS_GATEWAY_WASM")
	if path == "" {
		t.Fatal("set QUEEN_SQS_GATEWAY_WASM to the proxy-wasm build of queen-sqs")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A loopback port nothing listens on: broker calls to it fail at once.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func config(t *testing.T, vars map[string]interface{}) []byte {
	b, err := json.Marshal(vars)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func validVars(broker string) map[string]interface{} {
	return map[string]interface{}{
		"QUEEN_URL":                    "http://" + broker,
		"QUEEN_SQS_CREDENTIALS":        "test:test:token-token-token-token",
		"QUEEN_SQS_HANDLE_SECRET":      "gateway-test-handle-secret-0123456789",
		"QUEEN_SQS_DEFAULT_PARTITIONS": 4, // a number is taken as its text
	}
}

func serve(t *testing.T, cfg []byte, clusters map[string]string, workers int) *httptest.Server {
	t.Helper()
	gw, err := start(wasmBytes(t), cfg, clusters, workers)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	gw.bufferLimit = 8 << 20
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestConfigurationThatIsNotAnObjectIsRefused(t *testing.T) {
	for _, cfg := range []string{`not json`, `["QUEEN_URL"]`, `{"QUEEN_URL": {"nested": 1}}`} {
		if _, err := start(wasmBytes(t), []byte(cfg), nil, 1); err == nil {
			t.Errorf("configuration %s was accepted", cfg)
		}
	}
}

func TestHealthReportsTheConfiguration(t *testing.T) {
	broker := closedPort(t)
	srv := serve(t, config(t, validVars(broker)), map[string]string{"queen": broker}, 1)
	if code, body := get(t, srv.URL+"/healthz"); code != 200 || !strings.Contains(body, `"valid":true`) {
		t.Errorf("valid configuration: /healthz %d %s", code, body)
	}
	vars := validVars(broker)
	delete(vars, "QUEEN_SQS_HANDLE_SECRET")
	bad := serve(t, config(t, vars), map[string]string{"queen": broker}, 1)
	code, body := get(t, bad.URL+"/healthz")
	if code != 503 || !strings.Contains(body, "QUEEN_SQS_HANDLE_SECRET") {
		t.Errorf("no handle secret: /healthz %d %s", code, body)
	}
}

func TestBrokerCallsGoToTheConfiguredCluster(t *testing.T) {
	broker := closedPort(t)
	vars := validVars(broker)
	vars["QUEEN_SQS_UPSTREAM_CLUSTER"] = "elsewhere"
	// The gateway knows no cluster "elsewhere": the call is refused, the broker unreachable.
	srv := serve(t, config(t, vars), map[string]string{"queen": broker}, 1)
	code, body := get(t, srv.URL+"/readyz")
	if code != 503 || !strings.Contains(body, "elsewhere") {
		t.Errorf("unknown cluster: /readyz %d %s", code, body)
	}
	// A cluster that exists but answers nothing: not ready either, from a failed call.
	srv = serve(t, config(t, validVars(broker)), map[string]string{"queen": broker}, 1)
	if code, body := get(t, srv.URL+"/readyz"); code != 503 || !strings.Contains(body, "not ready") {
		t.Errorf("closed broker port: /readyz %d %s", code, body)
	}
}

func TestDeclaredOversizeBodyIsRefusedByThePlugin(t *testing.T) {
	broker := closedPort(t)
	srv := serve(t, config(t, validVars(broker)), map[string]string{"queen": broker}, 1)
	body := strings.Repeat("a", 4*1024*1024+1)
	req, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 413 || !strings.Contains(string(got), "RequestEntityTooLarge") {
		t.Errorf("oversize body: %d %s", resp.StatusCode, got)
	}
}

// Request ids come from random_get; wazero's default source is deterministic, which would
// give every VM the same ids (and the same message ids) in the same order.
func TestEachVMDrawsItsOwnRequestIds(t *testing.T) {
	broker := closedPort(t)
	srv := serve(t, config(t, validVars(broker)), map[string]string{"queen": broker}, 2)
	seen := map[string]bool{}
	for i := 0; i < 4; i++ { // round robin: two requests per VM
		req, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueues")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		id := resp.Header.Get("X-Amzn-Requestid")
		if resp.StatusCode != 403 || id == "" { // MissingAuthenticationToken
			t.Fatalf("unsigned request: %d, request id %q", resp.StatusCode, id)
		}
		if seen[id] {
			t.Fatalf("request id %s drawn twice", id)
		}
		seen[id] = true
	}
}

// A client that leaves ends its stream, and the stream's broker calls with it (Envoy
// cancels a destroyed context's calls): the broker sees the call go long before its
// time limit (readiness allows the broker 2 s).
func TestAClientThatLeavesCancelsItsBrokerCalls(t *testing.T) {
	arrived := make(chan struct{}, 1)
	gone := make(chan time.Time, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
			gone <- time.Now()
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	broker := strings.TrimPrefix(slow.URL, "http://")
	srv := serve(t, config(t, validVars(broker)), map[string]string{"queen": broker}, 1)
	ctx, leave := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/readyz", nil)
	go func() { _, _ = http.DefaultClient.Do(req) }()
	<-arrived
	left := time.Now()
	leave()
	select {
	case at := <-gone:
		if at.Sub(left) > time.Second {
			t.Errorf("the broker call ended %v after the client left", at.Sub(left))
		}
	case <-time.After(4 * time.Second):
		t.Error("the broker call outlived its client and its own time limit")
	}
}

// A chunked body declares no length: the filter counts what the gateway buffered, chunk by
// chunk, and refuses past the endpoint's cap without waiting for the end.
func TestChunkedOversizeBodyIsRefusedByThePlugin(t *testing.T) {
	broker := closedPort(t)
	srv := serve(t, config(t, validVars(broker)), map[string]string{"queen": broker}, 1)
	body := io.MultiReader(strings.NewReader(strings.Repeat("a", 4*1024*1024+1)))
	req, _ := http.NewRequest("POST", srv.URL+"/", body)
	if req.ContentLength != 0 {
		t.Fatalf("a length is known (%d): the request would not be chunked", req.ContentLength)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 413 || !strings.Contains(string(got), "RequestEntityTooLarge") {
		t.Errorf("chunked oversize body: %d %s", resp.StatusCode, got)
	}
}

// A stream waiting for its broker call does not hold the VM: four readiness checks whose
// broker calls each take 1 s, at once through one VM, take about 1 s, not 4.
func TestOneVMServesStreamsWhileTheirCallsWait(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Second)
		w.WriteHeader(200)
	}))
	defer slow.Close()
	broker := strings.TrimPrefix(slow.URL, "http://")
	srv := serve(t, config(t, validVars(broker)), map[string]string{"queen": broker}, 1)
	started := time.Now()
	codes := make(chan int, 4)
	for i := 0; i < 4; i++ {
		go func() {
			resp, err := http.Get(srv.URL + "/readyz")
			if err != nil {
				codes <- 0
				return
			}
			_ = resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	for i := 0; i < 4; i++ {
		if code := <-codes; code != 200 {
			t.Errorf("readiness answered %d", code)
		}
	}
	if took := time.Since(started); took > 2500*time.Millisecond {
		t.Errorf("four 1 s calls through one VM took %v: they ran one after another", took)
	}
}
