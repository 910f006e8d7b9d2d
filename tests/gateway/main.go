// queen-gateway: a small proxy-wasm gateway for testing the proxy-wasm build of queen-sqs
// in a real proxy-wasm host: MOSN's mosn.io/proxy-wasm-go-host (the ABI side) on wazero
// (the VM), behind a plain HTTP listener. Each request gets an HTTP context; its head and
// body go through the ABI (proxy_on_request_headers / _body), the filter's local response
// (proxy_send_local_response) is the answer, and its broker calls (proxy_http_call) go to
// the named cluster. Like Envoy, it runs several VMs (one per worker), each serving many
// streams at once.
//
//	queen-gateway -listen 127.0.0.1:8080 -wasm queen_sqs.wasm -config plugin.json \
//	    -cluster queen=127.0.0.1:6632 [-workers 2] [-buffer-limit 4194304]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"mosn.io/proxy-wasm-go-host/proxywasm/common"
)

type clusterFlag map[string]string

func (c clusterFlag) String() string { return fmt.Sprint(map[string]string(c)) }
func (c clusterFlag) Set(s string) error {
	name, addr, ok := strings.Cut(s, "=")
	if !ok || name == "" || addr == "" {
		return fmt.Errorf("want NAME=HOST:PORT, got %q", s)
	}
	c[name] = addr
	return nil
}

type gateway struct {
	vms         []*vm
	next        atomic.Uint64
	bufferLimit int64
}

func main() {
	clusters := clusterFlag{}
	listen := flag.String("listen", "127.0.0.1:8080", "address to serve on")
	wasmPath := flag.String("wasm", "", "the proxy-wasm module (queen_sqs.wasm built for wasm32-wasip1)")
	configPath := flag.String("config", "", "the plugin configuration (a JSON file)")
	workers := flag.Int("workers", runtime.NumCPU(), "VMs, one per worker as in Envoy")
	bufferLimit := flag.Int64("buffer-limit", 4<<20, "request body bytes buffered before the gateway itself answers 413")
	flag.Var(clusters, "cluster", "NAME=HOST:PORT, a cluster proxy_http_call may name (repeatable)")
	flag.Parse()
	if *wasmPath == "" {
		log.Fatal("-wasm is required")
	}
	wasm, err := os.ReadFile(*wasmPath)
	if err != nil {
		log.Fatal(err)
	}
	var config []byte
	if *configPath != "" {
		if config, err = os.ReadFile(*configPath); err != nil {
			log.Fatal(err)
		}
	}
	gw, err := start(wasm, config, clusters, *workers)
	if err != nil {
		log.Fatalf("gateway: %v", err)
	}
	gw.bufferLimit = *bufferLimit
	log.Printf("gateway: %d VM(s) up, serving on %s", len(gw.vms), *listen)
	srv := &http.Server{Addr: *listen, Handler: gw, ReadHeaderTimeout: 30 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

func start(wasm, config []byte, clusters map[string]string, workers int) (*gateway, error) {
	cache := wazero.NewCompilationCache()
	probe := wazero.NewRuntimeWithConfig(context.Background(), wazero.NewRuntimeConfig().WithCompilationCache(cache))
	abis, imports, err := abiNames(probe, wasm)
	_ = probe.Close(context.Background())
	if err != nil {
		return nil, err
	}
	log.Printf("gateway: module speaks %v, %d imports", abis, len(imports))
	module := &wazeroModule{cache: cache, wasm: wasm, abiNames: abis}
	gw := &gateway{}
	for i := 0; i < max(workers, 1); i++ {
		v, err := newVM(strconv.Itoa(i), module, config, clusters)
		if err != nil {
			return nil, fmt.Errorf("VM %d: %w", i, err)
		}
		gw.vms = append(gw.vms, v)
	}
	return gw, nil
}

// ServeHTTP: the request head to a VM (round robin), then its body, then the local response.
func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v := g.vms[g.next.Add(1)%uint64(len(g.vms))]
	s := &stream{headers: requestHeaders(r), resp: make(chan localResponse, 1)}
	hasBody := r.ContentLength != 0 // -1: chunked, length unknown
	opened := make(chan struct{})
	v.post(func() { v.open(s, !hasBody); close(opened) })
	defer v.post(func() { v.close(s) })
	<-opened
	// A filter that answered the head already (a declared oversize body) is not fed the body.
	if hasBody && len(s.resp) == 0 && !g.streamBody(v, s, r) {
		http.Error(w, "request body over the gateway's buffer limit", http.StatusRequestEntityTooLarge)
		return
	}
	select {
	case resp := <-s.resp:
		for k, val := range resp.headers {
			if !strings.HasPrefix(k, ":") {
				w.Header().Set(k, val)
			}
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(resp.body)))
		w.WriteHeader(resp.status)
		_, _ = w.Write(resp.body)
	case <-r.Context().Done():
	}
}

// streamBody feeds the body as it arrives, in chunks of at most 64 KiB, each call seeing
// the whole body buffered so far (as Envoy buffers for a filter that pauses); false when it
// outgrew the buffer limit. A client that leaves mid-body is left to the context's end.
func (g *gateway) streamBody(v *vm, s *stream, r *http.Request) bool {
	var total int64
	chunk := make([]byte, 64<<10)
	for {
		n, err := io.ReadFull(r.Body, chunk)
		total += int64(n)
		if total > g.bufferLimit {
			return false
		}
		data := append([]byte(nil), chunk[:n]...)
		end := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !end {
			return true
		}
		v.post(func() { v.feed(s, data, end) })
		if end {
			return true
		}
	}
}

// requestHeaders: HTTP/2-style, as Envoy hands them to a filter (pseudo-headers, names
// lower-cased, repeated values joined).
func requestHeaders(r *http.Request) common.CommonHeader {
	h := common.CommonHeader{
		":method":    r.Method,
		":path":      r.RequestURI,
		":authority": r.Host,
		":scheme":    "http",
	}
	for k, vals := range r.Header {
		h[strings.ToLower(k)] = strings.Join(vals, ",")
	}
	if r.ContentLength >= 0 && r.Method != http.MethodGet && r.Method != http.MethodHead {
		h["content-length"] = strconv.FormatInt(r.ContentLength, 10)
	}
	return h
}
