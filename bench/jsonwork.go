package bench

import (
	"context"
	"encoding/json"
	"errors"
)

// JSONWork is the json baseline: the JSON work of one exchange done by
// encoding/json in memory, with no transport and no dispatch. The client
// encodes the request, the server decodes the envelope and the params into
// Params and encodes the response, the client decodes the response and the
// result.
type JSONWork struct{ id uint64 }

type jsonRequest struct {
	JSONRPC string  `json:"jsonrpc"`
	ID      uint64  `json:"id"`
	Method  string  `json:"method"`
	Params  *Params `json:"params"`
}

type jsonEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type jsonResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *Params         `json:"result"`
}

type jsonError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

type jsonClientResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonError      `json:"error"`
}

// Echo does the JSON work of one echo call.
func (j *JSONWork) Echo(ctx context.Context, in, out *Params) error {
	j.id++
	req, err := json.Marshal(jsonRequest{"2.0", j.id, "echo", in})
	if err != nil {
		return err
	}
	// server
	var env jsonEnvelope
	if err := json.Unmarshal(req, &env); err != nil {
		return err
	}
	var p Params
	if err := json.Unmarshal(env.Params, &p); err != nil {
		return err
	}
	resp, err := json.Marshal(jsonResponse{"2.0", env.ID, &p})
	if err != nil {
		return err
	}
	// client
	var cr jsonClientResponse
	if err := json.Unmarshal(resp, &cr); err != nil {
		return err
	}
	if cr.Error != nil {
		return errors.New(cr.Error.Message)
	}
	return json.Unmarshal(cr.Result, out)
}

// Batch does the JSON work of one batch of echo calls.
func (j *JSONWork) Batch(ctx context.Context, in, out []Params) error {
	reqs := make([]jsonRequest, len(in))
	for i := range in {
		j.id++
		reqs[i] = jsonRequest{"2.0", j.id, "echo", &in[i]}
	}
	msg, err := json.Marshal(reqs)
	if err != nil {
		return err
	}
	// server
	var envs []jsonEnvelope
	if err := json.Unmarshal(msg, &envs); err != nil {
		return err
	}
	resps := make([]jsonResponse, len(envs))
	for i := range envs {
		p := new(Params)
		if err := json.Unmarshal(envs[i].Params, p); err != nil {
			return err
		}
		resps[i] = jsonResponse{"2.0", envs[i].ID, p}
	}
	reply, err := json.Marshal(resps)
	if err != nil {
		return err
	}
	// client
	var crs []jsonClientResponse
	if err := json.Unmarshal(reply, &crs); err != nil {
		return err
	}
	if len(crs) != len(out) {
		return errors.New("bench: batch length mismatch")
	}
	for i := range crs {
		if err := json.Unmarshal(crs[i].Result, &out[i]); err != nil {
			return err
		}
	}
	return nil
}

// Close does nothing.
func (j *JSONWork) Close() error { return nil }
