//go:build ignore

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"example.com/operator/gameapi"
	"example.com/operator/oapiwiring"
	"example.com/operator/tableapi"
)

const client = "oapi-codegen"

func operations() []operation {
	return []operation{
		{doc: "game.v1.yaml", name: "launchGame", answers: gameAnswers, call: func(ctx context.Context, url string, a answer) outcome {
			c, err := oapiwiring.NewGameClient(url, []byte("clientcheck-secret"))
			if err != nil {
				return outcome{what: "client: " + err.Error()}
			}
			token, player := "tok-live-0123456789abcdef", "p-1"
			res, err := c.LaunchGameWithResponse(ctx, gameapi.LaunchGameJSONRequestBody{
				Operator: "acme", Timestamp: time.Now().UnixMilli(), GameId: "crash", Token: &token, PlayerId: &player,
			})
			if err != nil {
				return outcome{what: "error: " + err.Error()}
			}
			return judge(res, res.HTTPResponse, a)
		}},
		{doc: "table.v1.yaml", name: "getCurrentRound", answers: tableAnswers, call: func(ctx context.Context, url string, a answer) outcome {
			c, err := tableapi.NewClientWithResponses(url)
			if err != nil {
				return outcome{what: "client: " + err.Error()}
			}
			res, err := c.GetCurrentRoundWithResponse(ctx)
			if err != nil {
				return outcome{what: "error: " + err.Error()}
			}
			return judge(res, res.HTTPResponse, a)
		}},
	}
}

// judge: oapi-codegen's response holds the raw answer and, for a declared
// JSON answer, a JSON<status> field. The answer is decoded when such a field
// holds the marker; an answer with no field filled is one the caller branches
// on by StatusCode().
func judge(res any, hr *http.Response, a answer) outcome {
	if hr == nil || hr.StatusCode != a.status {
		return outcome{what: "no HTTP response with the answer's status"}
	}
	v := reflect.ValueOf(res).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		if !strings.HasPrefix(name, "JSON") || f.Kind() != reflect.Pointer || f.IsNil() {
			continue
		}
		raw, err := json.Marshal(f.Interface())
		if err != nil {
			return outcome{what: fmt.Sprintf("%s does not encode: %v", name, err)}
		}
		if a.marker != "" && !strings.Contains(string(raw), a.marker) {
			return outcome{what: fmt.Sprintf("decoded into %s without %s", name, a.marker)}
		}
		return outcome{ok: true, decoded: true, what: fmt.Sprintf("decoded into %s", name)}
	}
	return outcome{ok: true, what: fmt.Sprintf("raw body, StatusCode() %d", hr.StatusCode)}
}
