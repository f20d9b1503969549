// Command chunkserver is an example chunk server: the storage side of the
// end-to-end rule (contract section 3, "Holders and storage"). It keeps
// chunks in memory and takes writes only through package fence: a write
// carries the writer's lease token in the Fencing-Token header, and a
// token below the highest the chunk accepted is refused (409), because
// its writer's lease was superseded, however late its write arrived.
//
//	PUT /chunks/{chunk}   Fencing-Token: T, body: the chunk's new content
//	    204 written; 409 stale token (JSON body naming both tokens);
//	    400 no or bad token
//	GET /chunks/{chunk}   200 the content, Fencing-Token: the highest
//	    token accepted; 404 never written
//
// A primary writes as client.Session.Act does it (the package example):
//
//	acted, err := session.Act(func(token int64) error {
//		req, _ := http.NewRequest("PUT", store+"/chunks/ch_1", body)
//		fence.SetToken(req.Header, token)
//		... send it; a 409 means: stop acting as primary
//	})
//
// Flags: -addr (default 127.0.0.1:0; the address it listens on is the
// first line on stdout, "chunkserver: listening on http://ADDR"), -log
// FILE (every accepted write as one JSON line, in the order applied:
// {"chunk", "token", "seq", "at_ns", "body"}, at_ns on CLOCK_MONOTONIC,
// for scripts/fence_check.sh), and
// -unfenced, which takes every write whatever its token: the end-to-end
// test's negative control, never for use. It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"chunklease/fence"
	"golang.org/x/sys/unix"
)

// maxChunkBytes bounds a write's body.
const maxChunkBytes = 1 << 20

// store is the chunks and the log of accepted writes.
type store struct {
	mu     sync.Mutex
	chunks map[string][]byte
	tokens map[string]int64 // the token of each chunk's latest write
	seq    int64            // writes applied, all chunks
	log    *json.Encoder    // nil: no log
}

// write applies one write; the fence (or, unfenced, nothing) has let it
// through. It runs under the chunk's fence lock, so the log's order per
// chunk is the order applied.
func (s *store) write(chunk string, token int64, body []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chunks[chunk] = body
	s.tokens[chunk] = max(s.tokens[chunk], token)
	s.seq++
	if s.log == nil {
		return nil
	}
	return s.log.Encode(struct {
		Chunk string `json:"chunk"`
		Token int64  `json:"token"`
		Seq   int64  `json:"seq"`
		AtNs  int64  `json:"at_ns"`
		Body  string `json:"body"`
	}{chunk, token, s.seq, monoNs(), string(body)})
}

// put is the write handler behind the fence: it reads the body and writes
// before returning, so the check, the record and the write are one step.
// monoNs reads CLOCK_MONOTONIC, the clock the end-to-end test compares
// every process's times on.
func monoNs() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func (s *store) put(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxChunkBytes))
	if err != nil {
		http.Error(w, "chunkserver: the body could not be read (at most 1 MiB): "+err.Error(), http.StatusBadRequest)
		return
	}
	token, _ := fence.TokenFrom(r.Header) // checked by the fence (0 when unfenced and missing)
	if err := s.write(r.PathValue("chunk"), token, body); err != nil {
		http.Error(w, "chunkserver: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *store) get(w http.ResponseWriter, r *http.Request) {
	chunk := r.PathValue("chunk")
	s.mu.Lock()
	body, ok := s.chunks[chunk]
	token := s.tokens[chunk]
	s.mu.Unlock()
	if !ok {
		http.Error(w, fmt.Sprintf("chunkserver: chunk %q was never written", chunk), http.StatusNotFound)
		return
	}
	w.Header().Set(fence.Header, strconv.FormatInt(token, 10))
	w.Write(body)
}

// handler routes the API; unfenced skips the fence (negative control).
func (s *store) handler(unfenced bool) http.Handler {
	var put http.Handler = http.HandlerFunc(s.put)
	if unfenced {
		var mu sync.Mutex // writes stay one at a time, in log order
		inner := put
		put = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			inner.ServeHTTP(w, r)
		})
	} else {
		put = fence.New().Middleware(func(r *http.Request) string { return r.PathValue("chunk") }, put)
	}
	mux := http.NewServeMux()
	mux.Handle("PUT /chunks/{chunk}", put)
	mux.HandleFunc("GET /chunks/{chunk}", s.get)
	return mux
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	logPath := flag.String("log", "", "write every accepted write to this file, one JSON line each")
	unfenced := flag.Bool("unfenced", false, "take every write whatever its token (the end-to-end test's negative control; never for use)")
	flag.Parse()
	if err := run(*addr, *logPath, *unfenced); err != nil {
		log.Fatal("chunkserver: ", err)
	}
}

func run(addr, logPath string, unfenced bool) error {
	s := &store{chunks: map[string][]byte{}, tokens: map[string]int64{}}
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return err
		}
		defer f.Close()
		s.log = json.NewEncoder(f) // unbuffered: every line is in the file once the write is answered
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("chunkserver: listening on http://%s\n", ln.Addr())
	if unfenced {
		fmt.Println("chunkserver: UNFENCED: every write is taken whatever its token (a negative control)")
	}
	srv := &http.Server{Handler: s.handler(unfenced), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
