package main

// proxy_http_call: a call to one of the gateway's clusters (name -> host:port), made on
// its own goroutine; the answer comes back to the VM as proxy_on_http_call_response for
// the context that dispatched it, as Envoy delivers it. A call that fails or runs out of
// time comes back without headers (Envoy's way: no :status).

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
	"time"

	"mosn.io/proxy-wasm-go-host/proxywasm/common"
	v1 "mosn.io/proxy-wasm-go-host/proxywasm/v1"
)

type callAnswer struct {
	headers common.CommonHeader // with :status; nil when the call failed
	body    []byte
}

func (v *vm) HttpCall(cluster string, headers common.HeaderMap, body common.IoBuffer,
	_ common.HeaderMap, timeoutMs int32) (int32, v1.WasmResult) {
	addr, ok := v.clusters[cluster]
	if !ok {
		log.Printf("gateway %s: proxy_http_call to unknown cluster %q", v.name, cluster)
		return 0, v1.WasmResultBadArgument
	}
	method, _ := headers.Get(":method")
	path, _ := headers.Get(":path")
	authority, _ := headers.Get(":authority")
	if method == "" || path == "" {
		return 0, v1.WasmResultBadArgument
	}
	if timeoutMs <= 0 {
		timeoutMs = 5000
	}
	var payload []byte
	if body != nil {
		payload = append([]byte(nil), body.Bytes()...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeoutMs)*time.Millisecond)
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, bytes.NewReader(payload))
	if err != nil {
		cancel()
		return 0, v1.WasmResultBadArgument
	}
	if authority != "" {
		req.Host = authority
	}
	headers.Range(func(k, val string) bool {
		if !strings.HasPrefix(k, ":") && !strings.EqualFold(k, "content-length") {
			req.Header.Set(k, val)
		}
		return true
	})
	v.nextCall++
	token := v.nextCall
	owner := v.rootID
	if s := v.current; s != nil {
		owner = s.id
		if s.calls == nil {
			s.calls = map[int32]context.CancelFunc{}
		}
		s.calls[token] = cancel
	}
	go func() {
		defer cancel()
		answer := v.do(req)
		v.post(func() { v.deliver(owner, token, answer) })
	}()
	return token, v1.WasmResultOk
}

func (v *vm) do(req *http.Request) callAnswer {
	resp, err := v.client.Do(req)
	if err != nil {
		return callAnswer{}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return callAnswer{}
	}
	h := common.CommonHeader{":status": strconv.Itoa(resp.StatusCode)}
	for k, vals := range resp.Header {
		h[strings.ToLower(k)] = strings.Join(vals, ",")
	}
	return callAnswer{headers: h, body: body}
}

// deliver runs on the VM goroutine. A stream deleted meanwhile gets nothing (Envoy cancels
// a context's calls when it is destroyed).
func (v *vm) deliver(owner, token int32, a callAnswer) {
	if owner == v.rootID {
		v.current = nil
	} else {
		s, ok := v.streams[owner]
		if !ok || s.deleted {
			return
		}
		delete(s.calls, token)
		v.current = s
	}
	v.callHeaders = a.headers
	if v.callHeaders == nil {
		v.callHeaders = common.CommonHeader{}
	}
	v.callBody = common.NewIoBufferBytes(a.body)
	err := v.abi.GetExports().ProxyOnHttpCallResponse(owner, token, int32(len(a.headers)), int32(len(a.body)), 0)
	v.callHeaders, v.callBody = nil, nil
	if err != nil && v.current != nil {
		v.trapped(v.current, err)
	}
}
