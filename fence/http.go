package fence

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Header is the HTTP header that carries a writer's fencing token, in
// decimal.
const Header = "Fencing-Token"

// SetToken puts token in h (the request's header) under Header.
func SetToken(h http.Header, token int64) { h.Set(Header, strconv.FormatInt(token, 10)) }

// TokenFrom reads the token from h; the error matches ErrBadToken when it
// is missing or not a lease token.
func TokenFrom(h http.Header) (int64, error) {
	v := h.Get(Header)
	if v == "" {
		return 0, fmt.Errorf("%w: the request has no %s header; send the token of the lease you write under", ErrBadToken, Header)
	}
	token, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q is not an integer", ErrBadToken, Header, v)
	}
	return token, checkRange(token)
}

// Middleware fences next: a request reaches next only with a token (from
// Header) at least the highest accepted for its resource (resourceOf),
// and next runs under that resource's lock, so the check, the record and
// whatever next writes are one atomic step (see Do). next must finish its
// write before it returns. A request without a valid token is answered
// 400, a stale one 409 Conflict, each with a JSON body {"error": text,
// "resource", "token", "highest"}; next is not called. A resource named
// "" is refused with 400 too.
func (f *Fence) Middleware(resourceOf func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := TokenFrom(r.Header)
		res := resourceOf(r)
		if err == nil && res == "" {
			err = errors.New("fence: the request names no resource")
		}
		if err == nil {
			err = f.Do(res, token, func() error { next.ServeHTTP(w, r); return nil })
		}
		var stale *StaleError
		switch {
		case err == nil:
		case errors.As(err, &stale):
			refuse(w, http.StatusConflict, refusal{Error: err.Error(), Resource: res, Token: token, Highest: stale.Highest})
		default:
			refuse(w, http.StatusBadRequest, refusal{Error: err.Error(), Resource: res, Token: token})
		}
	})
}

// Refused is the writer's side of Middleware: for the middleware's 409
// answer it returns the *StaleError it stands for (reading the body), so
// that the writer can tell "a newer holder wrote: stop acting as
// primary" from any other failure; for any other answer, nil.
func Refused(resp *http.Response) error {
	if resp.StatusCode != http.StatusConflict {
		return nil
	}
	var body refusal
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Highest == 0 {
		return nil // a 409 of the handler's own, not the fence's
	}
	return &StaleError{Resource: body.Resource, Token: body.Token, Highest: body.Highest}
}

// refusal is the body of a refused request.
type refusal struct {
	Error    string `json:"error"`
	Resource string `json:"resource"`
	Token    int64  `json:"token"`
	Highest  int64  `json:"highest,omitempty"`
}

func refuse(w http.ResponseWriter, status int, body refusal) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}
