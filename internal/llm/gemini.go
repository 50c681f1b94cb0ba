package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// gemini speaks Google's Generative Language REST API (generateContent and
// streamGenerateContent with alt=sse). The key travels as the documented
// ?key= query parameter; the transport redacts it from every error.
type gemini struct {
	t     *transport
	base  string
	model string
	key   string
}

var _ backend = (*gemini)(nil)

func (g *gemini) name() string { return ProviderGemini }

// geminiRequest is the body of generateContent.
type geminiRequest struct {
	SystemInstruction *geminiContent        `json:"systemInstruction,omitempty"`
	Contents          []geminiContent       `json:"contents"`
	GenerationConfig  *geminiGenerationConf `json:"generationConfig,omitempty"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text    string `json:"text"`
	Thought bool   `json:"thought,omitempty"`
}

type geminiGenerationConf struct {
	Temperature      *float64 `json:"temperature,omitempty"`
	ResponseMIMEType string   `json:"responseMimeType,omitempty"`
}

// geminiResponse is a generateContent response, and one event of a stream.
type geminiResponse struct {
	Candidates []struct {
		Content      geminiContent `json:"content"`
		FinishReason string        `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// text returns the answer text of the first candidate (thought parts left
// out) and the reason the model stopped, or an error for a blocked prompt.
func (r *geminiResponse) text() (string, string, error) {
	if r.Error != nil {
		return "", "", answerError{fmt.Errorf("gemini stream error: %s", r.Error.Message)}
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		return "", "", answerError{fmt.Errorf("gemini blocked the prompt (%s)", r.PromptFeedback.BlockReason)}
	}
	if len(r.Candidates) == 0 {
		return "", "", nil
	}
	c := r.Candidates[0]
	var b strings.Builder
	for _, p := range c.Content.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String(), c.FinishReason, nil
}

func (g *gemini) endpoint(method string, stream bool) string {
	model := strings.TrimPrefix(g.model, "models/")
	q := url.Values{}
	if stream {
		q.Set("alt", "sse")
	}
	q.Set("key", g.key)
	return fmt.Sprintf("%s/v1beta/models/%s:%s?%s", g.base, url.PathEscape(model), method, q.Encode())
}

func (g *gemini) request(c call) geminiRequest {
	temp := c.temperature
	req := geminiRequest{
		Contents:         []geminiContent{{Role: "user", Parts: []geminiPart{{Text: c.user}}}},
		GenerationConfig: &geminiGenerationConf{Temperature: &temp},
	}
	if c.system != "" {
		req.SystemInstruction = &geminiContent{Parts: []geminiPart{{Text: c.system}}}
	}
	if c.json {
		req.GenerationConfig.ResponseMIMEType = "application/json"
	}
	return req
}

// complete implements backend.
func (g *gemini) complete(ctx context.Context, c call) (string, error) {
	var text string
	err := g.t.post(ctx, g.endpoint("generateContent", false), nil, g.request(c), func(resp *http.Response) error {
		var r geminiResponse
		if err := readJSON(resp, &r); err != nil {
			return err
		}
		t, finish, err := r.text()
		if err != nil {
			return err
		}
		if strings.TrimSpace(t) == "" {
			return emptyAnswer(ProviderGemini, finish)
		}
		text = t
		return nil
	})
	return text, err
}

// stream implements backend.
func (g *gemini) stream(ctx context.Context, c call, onDelta func(string)) (string, error) {
	return g.t.streamText(ctx, ProviderGemini, g.endpoint("streamGenerateContent", true), nil, g.request(c), geminiChunk, onDelta)
}

// geminiChunk reads one event of streamGenerateContent: a response whose
// first candidate carries the next text.
func geminiChunk(data string) (streamChunk, error) {
	var r geminiResponse
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return streamChunk{}, answerError{fmt.Errorf("decoding a stream event: %w", err)}
	}
	text, finish, err := r.text()
	return streamChunk{text: text, finish: finish}, err
}

// emptyAnswer is the error for a response without text.
func emptyAnswer(provider, finish string) error {
	if finish != "" && finish != "STOP" && finish != "stop" {
		return answerError{fmt.Errorf("%s returned no text (finish reason %s)", provider, finish)}
	}
	return answerError{fmt.Errorf("%s returned no text", provider)}
}

// answerError is a well-formed answer we cannot use; it is not retried.
type answerError struct{ err error }

func (e answerError) Error() string { return e.err.Error() }
func (e answerError) Unwrap() error { return e.err }

func isAnswerError(err error) bool {
	var ae answerError
	return errors.As(err, &ae)
}
