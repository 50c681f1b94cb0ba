package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// openAI speaks the OpenAI chat completions API, which OpenAI itself, Ollama
// (…/v1), vLLM and most self-hosted servers implement. The key, when there is
// one, travels as a bearer token.
type openAI struct {
	t     *transport
	base  string
	model string
	key   string
}

var _ backend = (*openAI)(nil)

func (o *openAI) name() string { return ProviderOpenAI }

type openAIMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openAIRequest struct {
	Model       string          `json:"model"`
	Messages    []openAIMessage `json:"messages"`
	Temperature float64         `json:"temperature"`
	Stream      bool            `json:"stream,omitempty"`
}

// openAIResponse is a chat completion, and one chunk of a stream (which
// carries delta instead of message).
type openAIResponse struct {
	Choices []struct {
		Message      *openAIMessage `json:"message"`
		Delta        *openAIMessage `json:"delta"`
		FinishReason string         `json:"finish_reason"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (o *openAI) header() http.Header {
	h := http.Header{}
	if o.key != "" {
		h.Set("Authorization", "Bearer "+o.key)
	}
	return h
}

func (o *openAI) request(c call, stream bool) openAIRequest {
	var msgs []openAIMessage
	if c.system != "" {
		msgs = append(msgs, openAIMessage{Role: "system", Content: c.system})
	}
	msgs = append(msgs, openAIMessage{Role: "user", Content: c.user})
	return openAIRequest{Model: o.model, Messages: msgs, Temperature: c.temperature, Stream: stream}
}

// complete implements backend.
func (o *openAI) complete(ctx context.Context, c call) (string, error) {
	var text string
	err := o.t.post(ctx, o.base+"/chat/completions", o.header(), o.request(c, false), func(resp *http.Response) error {
		var r openAIResponse
		if err := readJSON(resp, &r); err != nil {
			return err
		}
		if r.Error != nil {
			return answerError{fmt.Errorf("openai error: %s", r.Error.Message)}
		}
		var finish string
		if len(r.Choices) > 0 {
			finish = r.Choices[0].FinishReason
			if m := r.Choices[0].Message; m != nil {
				text = m.Content
			}
		}
		if strings.TrimSpace(text) == "" {
			return emptyAnswer(ProviderOpenAI, finish)
		}
		return nil
	})
	return text, err
}

// stream implements backend.
func (o *openAI) stream(ctx context.Context, c call, onDelta func(string)) (string, error) {
	return o.t.streamText(ctx, ProviderOpenAI, o.base+"/chat/completions", o.header(), o.request(c, true), openAIChunk, onDelta)
}

// openAIChunk reads one event of a chat completion stream: a chunk whose
// choices carry deltas, or "[DONE]".
func openAIChunk(data string) (streamChunk, error) {
	if strings.TrimSpace(data) == "[DONE]" {
		return streamChunk{done: true}, nil
	}
	var r openAIResponse
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return streamChunk{}, answerError{fmt.Errorf("decoding a stream chunk: %w", err)}
	}
	if r.Error != nil {
		return streamChunk{}, answerError{fmt.Errorf("openai stream error: %s", r.Error.Message)}
	}
	var c streamChunk
	for _, ch := range r.Choices {
		if ch.FinishReason != "" {
			c.finish = ch.FinishReason
		}
		if ch.Delta != nil {
			c.text += ch.Delta.Content
		}
	}
	return c, nil
}
