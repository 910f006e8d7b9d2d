package main

// One proxy-wasm VM, as an Envoy worker thread holds one: every call into the module runs
// on the VM's own goroutine (jobs), so callbacks never overlap, while broker calls and
// ticks run elsewhere and come back as jobs. Many streams are in flight at once: a stream
// waiting for its broker call does not hold the VM.

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"sync/atomic"
	"time"

	"mosn.io/proxy-wasm-go-host/proxywasm/common"
	v1 "mosn.io/proxy-wasm-go-host/proxywasm/v1"
)

type localResponse struct {
	status  int
	headers map[string]string
	body    []byte
}

type stream struct {
	id      int32
	headers common.CommonHeader
	body    common.IoBuffer
	// Buffered: the module's local response, or a 500 when the module trapped.
	resp     chan localResponse
	answered bool
	deleted  bool
	// Its broker calls in flight, by token: cancelled when the stream ends, as Envoy does.
	calls map[int32]context.CancelFunc
}

type vm struct {
	v1.DefaultImportsHandler
	name     string
	inst     *wazeroInstance
	abi      *v1.ABIContext
	jobs     chan func()
	rootID   int32
	nextID   int32
	streams  map[int32]*stream
	current  *stream // the effective context; nil: the root
	clusters map[string]string
	client   *http.Client
	config   []byte
	nextCall int32
	// The answer being delivered, during proxy_on_http_call_response only.
	callHeaders common.HeaderMap
	callBody    common.IoBuffer
	tick        *time.Ticker
	tickStop    chan struct{}
	tickQueued  atomic.Bool
}

func newVM(name string, module *wazeroModule, config []byte, clusters map[string]string) (*vm, error) {
	inst := module.NewInstance().(*wazeroInstance)
	v := &vm{
		name: name, inst: inst, jobs: make(chan func(), 4096), rootID: 1, nextID: 1,
		streams: map[int32]*stream{}, clusters: clusters, config: config,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
	}
	v.abi = &v1.ABIContext{Imports: v, Instance: inst}
	v1.RegisterImports(inst)
	registerFixes(inst)
	inst.SetData(v.abi)
	if err := inst.Start(); err != nil {
		return nil, err
	}
	go v.loop()
	errc := make(chan error, 1)
	v.post(func() { errc <- v.startRoot() })
	return v, <-errc
}

func (v *vm) loop() {
	for job := range v.jobs {
		job()
	}
}

func (v *vm) post(job func()) { v.jobs <- job }

// startRoot: the root context, the VM start and the plugin configuration; a plugin that
// refuses its configuration is not served (Envoy rejects such a listener).
func (v *vm) startRoot() error {
	ex := v.abi.GetExports()
	if err := ex.ProxyOnContextCreate(v.rootID, 0); err != nil {
		return err
	}
	if ok, err := ex.ProxyOnVmStart(v.rootID, 0); err != nil || ok == 0 {
		return fmt.Errorf("proxy_on_vm_start: %v (result %d)", err, ok)
	}
	ok, err := ex.ProxyOnConfigure(v.rootID, int32(len(v.config)))
	if err != nil {
		return err
	}
	if ok == 0 {
		return fmt.Errorf("the plugin refused its configuration (see its log above)")
	}
	return nil
}

// open creates the stream's context and feeds it the request head (on the VM goroutine).
func (v *vm) open(s *stream, endOfStream bool) {
	v.nextID++
	s.id = v.nextID
	v.streams[s.id] = s
	v.current = s
	ex := v.abi.GetExports()
	if err := ex.ProxyOnContextCreate(s.id, v.rootID); err != nil {
		v.trapped(s, err)
		return
	}
	eos := int32(0)
	if endOfStream {
		eos = 1
	}
	if _, err := ex.ProxyOnRequestHeaders(s.id, int32(len(s.headers)), eos); err != nil {
		v.trapped(s, err)
	}
}

// feed adds a chunk to the stream's buffered body and hands the filter the whole of it.
func (v *vm) feed(s *stream, chunk []byte, end bool) {
	if s.deleted || s.answered {
		return
	}
	if s.body == nil {
		s.body = common.NewIoBufferBytes(nil)
	}
	_, _ = s.body.Write(chunk)
	v.current = s
	eos := int32(0)
	if end {
		eos = 1
	}
	if _, err := v.abi.GetExports().ProxyOnRequestBody(s.id, int32(s.body.Len()), eos); err != nil {
		v.trapped(s, err)
	}
}

// close ends the stream as Envoy does: on_done, on_log, on_delete; its calls are cancelled.
func (v *vm) close(s *stream) {
	if s.deleted || s.id == 0 {
		return
	}
	s.deleted = true
	for _, cancel := range s.calls {
		cancel()
	}
	v.current = s
	ex := v.abi.GetExports()
	_, _ = ex.ProxyOnDone(s.id)
	_ = ex.ProxyOnLog(s.id)
	_ = ex.ProxyOnDelete(s.id)
	delete(v.streams, s.id)
	v.current = nil
}

func (v *vm) trapped(s *stream, err error) {
	log.Printf("gateway %s: stream %d: wasm trap: %v", v.name, s.id, err)
	if !s.answered {
		s.answered = true
		s.resp <- localResponse{status: 500, body: []byte("wasm trap\n")}
	}
}

// --- the imports the module calls (MOSN's ImportsHandler) -------------------------------

func (v *vm) Log(level v1.LogLevel, msg string) v1.WasmResult {
	log.Printf("gateway %s: wasm log [%d]: %s", v.name, level, msg)
	return v1.WasmResultOk
}

func (v *vm) GetRootContextID() int32 { return v.rootID }

func (v *vm) SetEffectiveContextID(id int32) v1.WasmResult {
	if id == v.rootID {
		v.current = nil
		return v1.WasmResultOk
	}
	s, ok := v.streams[id]
	if !ok {
		return v1.WasmResultBadArgument
	}
	v.current = s
	return v1.WasmResultOk
}

func (v *vm) GetPluginConfig() common.IoBuffer { return common.NewIoBufferBytes(v.config) }
func (v *vm) GetVmConfig() common.IoBuffer     { return common.NewIoBufferBytes(nil) }

func (v *vm) GetHttpRequestHeader() common.HeaderMap {
	if v.current == nil {
		return nil
	}
	return v.current.headers
}

func (v *vm) GetHttpRequestBody() common.IoBuffer {
	if v.current == nil || v.current.body == nil {
		return nil
	}
	return v.current.body
}

func (v *vm) GetHttpRequestTrailer() common.HeaderMap { return common.CommonHeader{} }

func (v *vm) GetHttpCallResponseHeaders() common.HeaderMap { return v.callHeaders }
func (v *vm) GetHttpCallResponseBody() common.IoBuffer     { return v.callBody }
func (v *vm) GetHttpCallResponseTrailer() common.HeaderMap { return common.CommonHeader{} }

func (v *vm) ResumeHttpRequest() v1.WasmResult  { return v1.WasmResultOk }
func (v *vm) ResumeHttpResponse() v1.WasmResult { return v1.WasmResultOk }
func (v *vm) Done() v1.WasmResult               { return v1.WasmResultOk }

// SendHttpResp: proxy_send_local_response, the filter's answer to its stream.
func (v *vm) SendHttpResp(code int32, _ common.IoBuffer, body common.IoBuffer,
	headers common.HeaderMap, _ int32) v1.WasmResult {
	s := v.current
	if s == nil || s.deleted {
		return v1.WasmResultBadArgument
	}
	if s.answered {
		return v1.WasmResultBadArgument
	}
	resp := localResponse{status: int(code), headers: map[string]string{}}
	if headers != nil {
		headers.Range(func(k, val string) bool { resp.headers[k] = val; return true })
	}
	if body != nil {
		resp.body = append([]byte(nil), body.Bytes()...)
	}
	s.answered = true
	s.resp <- resp
	return v1.WasmResultOk
}

// SetTickPeriodMilliseconds: proxy_on_tick on the root every period (0: off). A tick is
// not queued again while the last one waits, so a busy VM is not flooded.
func (v *vm) SetTickPeriodMilliseconds(ms int32) v1.WasmResult {
	if v.tick != nil {
		v.tick.Stop()
		close(v.tickStop)
		v.tick = nil
	}
	if ms <= 0 {
		return v1.WasmResultOk
	}
	v.tick = time.NewTicker(time.Duration(ms) * time.Millisecond)
	v.tickStop = make(chan struct{})
	go func(t *time.Ticker, stop chan struct{}) {
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if v.tickQueued.CompareAndSwap(false, true) {
					v.post(func() {
						v.tickQueued.Store(false)
						v.current = nil
						_ = v.abi.GetExports().ProxyOnTick(v.rootID)
					})
				}
			}
		}
	}(v.tick, v.tickStop)
	return v1.WasmResultOk
}
