//! Asking the model server how big its context is. Each server family says
//! it in its own place; the first that answers wins:
//!
//! 1. vLLM: `GET <api>/models` → `data[i].max_model_len` for our model;
//! 2. llama.cpp: `GET <root>/props` → `default_generation_settings.n_ctx`
//!    (older builds: top-level `n_ctx`);
//! 3. Ollama: `POST <root>/api/show {"model"}` → `num_ctx` in `parameters`
//!    when the model sets one; otherwise Ollama serves its default context
//!    (4096), never more than the model's `<arch>.context_length`.
//!
//! Every failure (refused, 404, timeout, other JSON) just means "this server
//! does not say": the caller falls back to the known-model table.

use std::time::Duration;

use reqwest::{Client, Url};
use serde_json::{Value, json};

use crate::agent::provider::OpenAiConfig;

/// Each probe request gives up after this long: a window we cannot learn
/// quickly is not worth delaying the first turn for.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// What Ollama serves when a model sets no `num_ctx`.
const OLLAMA_DEFAULT_CTX: usize = 4_096;

/// The server's context window and which kind of server said it.
pub async fn probe_window(config: &OpenAiConfig) -> Option<(usize, &'static str)> {
    let (endpoint, client) = probe_client(config)?;
    let get = |url: Url| {
        let mut request = client.get(url);
        if let Some(key) = &config.api_key {
            request = request.bearer_auth(key.expose());
        }
        request
    };
    let api = endpoint.as_str().trim_end_matches("/chat/completions");
    if let Ok(models) = Url::parse(&format!("{api}/models"))
        && let Some(body) = json_of(get(models)).await
        && let Some(n) = vllm_window(&body, &config.model)
    {
        return Some((n, "vllm"));
    }
    let root = root_of(&endpoint);
    if let Some(body) = json_of(get(root.join("props").ok()?)).await
        && let Some(n) = llama_cpp_window(&body)
    {
        return Some((n, "llama.cpp"));
    }
    let show = client
        .post(root.join("api/show").ok()?)
        .header("content-type", "application/json")
        .body(json!({ "model": config.model }).to_string());
    if let Some(body) = json_of(show).await
        && let Some(n) = ollama_window(&body)
    {
        return Some((n, "ollama"));
    }
    None
}

/// The server's `POST /tokenize` (llama.cpp's), when it answers a test
/// text with a list of tokens: the counter then asks it instead of
/// estimating.
pub async fn probe_tokenizer(config: &OpenAiConfig) -> Option<Url> {
    let (endpoint, client) = probe_client(config)?;
    let url = root_of(&endpoint).join("tokenize").ok()?;
    let request = client
        .post(url.clone())
        .header("content-type", "application/json")
        .body(json!({ "content": "hello world", "add_special": false }).to_string());
    let body = json_of(request).await?;
    body.get("tokens")?.as_array()?;
    Some(url)
}

/// The chat endpoint and a client that gives up after [`PROBE_TIMEOUT`].
fn probe_client(config: &OpenAiConfig) -> Option<(Url, Client)> {
    crate::agent::provider::openai::install_crypto_provider();
    let endpoint = config.endpoint().ok()?;
    let client = Client::builder()
        .connect_timeout(PROBE_TIMEOUT)
        .timeout(PROBE_TIMEOUT)
        .build()
        .ok()?;
    Some((endpoint, client))
}

fn root_of(endpoint: &Url) -> Url {
    let mut root = endpoint.clone();
    root.set_path("/");
    root.set_query(None);
    root
}

/// The JSON body of a 2xx answer, or `None`.
async fn json_of(request: reqwest::RequestBuilder) -> Option<Value> {
    let response = request.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    serde_json::from_slice(&response.bytes().await.ok()?).ok()
}

fn positive(value: &Value) -> Option<usize> {
    value
        .as_u64()
        .filter(|n| *n > 0)
        .and_then(|n| usize::try_from(n).ok())
}

/// Our model's `max_model_len`, or the only model's when the names differ
/// (vLLM serves one model, often under a path-like id).
pub(crate) fn vllm_window(body: &Value, model: &str) -> Option<usize> {
    let data = body.get("data")?.as_array()?;
    let entry = data
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
        .or_else(|| (data.len() == 1).then(|| &data[0]))?;
    positive(entry.get("max_model_len")?)
}

pub(crate) fn llama_cpp_window(body: &Value) -> Option<usize> {
    body.pointer("/default_generation_settings/n_ctx")
        .and_then(positive)
        .or_else(|| body.get("n_ctx").and_then(positive))
}

pub(crate) fn ollama_window(body: &Value) -> Option<usize> {
    let native = body
        .get("model_info")
        .and_then(Value::as_object)
        .and_then(|info| {
            info.iter()
                .find(|(key, _)| key.ends_with(".context_length"))
                .and_then(|(_, v)| positive(v))
        });
    let num_ctx = body
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|params| {
            params.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next()?.parse::<usize>().ok())
                    .flatten()
                    .filter(|n| *n > 0)
            })
        });
    match (num_ctx, native) {
        (Some(n), _) => Some(n),
        (None, Some(native)) => Some(native.min(OLLAMA_DEFAULT_CTX)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_servers_answer_is_read_from_its_own_place() {
        let vllm = json!({"object": "list", "data": [
            {"id": "other", "max_model_len": 4096},
            {"id": "Qwen/Qwen2.5-7B", "max_model_len": 32768}]});
        assert_eq!(vllm_window(&vllm, "Qwen/Qwen2.5-7B"), Some(32_768));
        assert_eq!(vllm_window(&vllm, "missing"), None);
        // Ollama's /v1/models has no max_model_len: not a vLLM answer.
        let ollama_models =
            json!({"object": "list", "data": [{"id": "llama3", "object": "model"}]});
        assert_eq!(vllm_window(&ollama_models, "llama3"), None);

        let props = json!({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1});
        assert_eq!(llama_cpp_window(&props), Some(8192));
        assert_eq!(llama_cpp_window(&json!({"n_ctx": 2048})), Some(2048));
        assert_eq!(llama_cpp_window(&json!({"n_ctx": -1})), None);

        let show = json!({"parameters": "stop \"<|eot|>\"\nnum_ctx 16384",
                          "model_info": {"general.architecture": "llama", "llama.context_length": 131072}});
        assert_eq!(ollama_window(&show), Some(16_384));
        let show = json!({"model_info": {"llama.context_length": 131072}});
        assert_eq!(ollama_window(&show), Some(OLLAMA_DEFAULT_CTX));
        let show = json!({"model_info": {"phi.context_length": 2048}});
        assert_eq!(ollama_window(&show), Some(2048));
        assert_eq!(ollama_window(&json!({"error": "model not found"})), None);
    }
}
