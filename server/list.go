package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
	"github.com/tidemark/tidemark/temporal"
)

// listMemories answers GET /v1/collections/{c}/memories.
func (s *Server) listMemories(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	req, err := listRequest(r, true)
	if err != nil {
		return err
	}
	res, err := c.List(r.Context(), req)
	if err != nil {
		return err
	}
	return s.writeJSON(w, 200, api.MemoryList{Memories: wireMemories(res.Memories), NextCursor: res.Next})
}

// countMemories answers GET /v1/collections/{c}/count.
func (s *Server) countMemories(w http.ResponseWriter, r *http.Request, t *Token) error {
	c, err := s.coll(r)
	if err != nil {
		return err
	}
	req, err := listRequest(r, false)
	if err != nil {
		return err
	}
	n, err := c.Count(r.Context(), req)
	if err != nil {
		return err
	}
	return s.writeJSON(w, 200, api.Count{Count: n})
}

// listRequest reads a listing's query parameters; paged says limit and
// cursor are allowed. An unknown or repeated parameter is an error, as an
// unknown JSON field is.
func listRequest(r *http.Request, paged bool) (*tidemark.ListRequest, error) {
	req := &tidemark.ListRequest{}
	for name, vs := range r.URL.Query() {
		if len(vs) != 1 {
			return nil, errf(400, api.CodeInvalidArgument, "%s: given %d times", name, len(vs))
		}
		v := vs[0]
		var err error
		switch name {
		case "limit":
			if !paged {
				return nil, errf(400, api.CodeInvalidArgument, "limit: a count has no pages")
			}
			if req.Limit, err = strconv.Atoi(v); err != nil || req.Limit < 1 || req.Limit > tidemark.MaxListLimit {
				return nil, errf(400, api.CodeInvalidArgument, "limit: want 1…%d, got %q", tidemark.MaxListLimit, v)
			}
		case "cursor":
			if !paged {
				return nil, errf(400, api.CodeInvalidArgument, "cursor: a count has no pages")
			}
			req.Cursor = v
		case "now":
			req.Now, err = queryTime(name, v)
		case "as_of":
			req.AsOf, err = queryTime(name, v)
		case "as_of_tx":
			req.AsOfTx, err = queryTime(name, v)
		case "filter":
			f, ferr := tidemark.ParseFilter([]byte(v))
			if ferr != nil {
				return nil, errf(400, api.CodeInvalidArgument, "filter: %v", strings.TrimPrefix(ferr.Error(), "tidemark: invalid input: filter: "))
			}
			req.Filter = f
		case "all":
			req.All, err = strconv.ParseBool(v)
			if err != nil {
				err = errf(400, api.CodeInvalidArgument, "all: want true or false, got %q", v)
			}
		case "kinds":
			for _, k := range strings.Split(v, ",") {
				var kind temporal.Kind
				if err := kind.UnmarshalText([]byte(k)); err != nil {
					return nil, errf(400, api.CodeInvalidArgument, "kinds: %q is not a kind", k)
				}
				req.Kinds |= temporal.KindsOf(kind)
			}
		case "statuses":
			for _, st := range strings.Split(v, ",") {
				var status temporal.Status
				if err := status.UnmarshalText([]byte(st)); err != nil {
					return nil, errf(400, api.CodeInvalidArgument, "statuses: %q is not a status", st)
				}
				req.Statuses |= temporal.StatusesOf(status)
			}
		case "sources":
			for _, src := range strings.Split(v, ",") {
				var source temporal.Source
				if err := source.UnmarshalText([]byte(src)); err != nil {
					return nil, errf(400, api.CodeInvalidArgument, "sources: %q is not a source", src)
				}
				req.Sources = append(req.Sources, source)
			}
		case api.MinSeqParam:
			// Every route's (the handler waited for it).
		default:
			return nil, errf(400, api.CodeInvalidArgument, "unknown query parameter %q", name)
		}
		if err != nil {
			return nil, err
		}
	}
	return req, nil
}

// queryTime reads a time parameter: RFC 3339, or a date (YYYY-MM-DD, at
// midnight UTC).
func queryTime(name, v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, errf(400, api.CodeInvalidArgument, "%s: want an RFC 3339 time or a YYYY-MM-DD date, got %q", name, v)
}
