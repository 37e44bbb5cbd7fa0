wrk.method = "POST"
wrk.body = '{"model": "auto", "messages": [{"role": "user", "content": "Hi! How was your weekend?"}], "max_tokens": 64}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer "
