package fence_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"chunklease/fence"
)

// Storage in Go: the check, the record and the write are one step.
func ExampleFence_Do() {
	f := fence.New()
	chunks := map[string]string{}
	write := func(token int64, data string) error {
		return f.Do("ch_1", token, func() error {
			chunks["ch_1"] = data // the write itself, under the chunk's lock
			return nil
		})
	}
	fmt.Println(write(41, "from the primary with token 41"))
	fmt.Println(write(42, "from the next primary"))
	err := write(41, "late, from the first primary after a pause")
	fmt.Println(errors.Is(err, fence.ErrStale), chunks["ch_1"])
	// Output:
	// <nil>
	// <nil>
	// true from the next primary
}

// Storage over HTTP: the handler runs only for a token at least the
// highest accepted, and the writer reads a refusal with Refused.
func ExampleFence_Middleware() {
	f := fence.New()
	var data string
	store := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		data = string(b) // written before the handler returns: still under the fence
		w.WriteHeader(http.StatusNoContent)
	}
	mux := http.NewServeMux()
	mux.Handle("PUT /chunks/{chunk}", f.Middleware(func(r *http.Request) string { return r.PathValue("chunk") }, http.HandlerFunc(store)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	put := func(token int64, body string) {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/chunks/ch_1", strings.NewReader(body))
		fence.SetToken(req.Header, token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		if err := fence.Refused(resp); err != nil {
			fmt.Println(resp.StatusCode, errors.Is(err, fence.ErrStale))
			return
		}
		fmt.Println(resp.StatusCode)
	}
	put(7, "v1")
	put(9, "v2")
	put(7, "late")
	fmt.Println(data)
	// Output:
	// 204
	// 204
	// 409 true
	// v2
}
