// attn-serve: a translation server over a trained run, with LibreTranslate's HTTP API.
//   attn-serve --model runs/en-it [--host 127.0.0.1] [--port 8080] [--beam 5] [--precision auto]
//   open http://127.0.0.1:8080/ : the attention explorer (lib/serve/explorer_api.h)
//   curl -s localhost:8080/translate -H 'Content-Type: application/json' -d '{"q": "Hello.", "target": "it", "source":
//   "en"}'
//
// Requests' sentences are batched together (lib/serve/sentence_queue.h); the model is loaded
// once, after the port is bound, so /health answers 503 while it loads. SIGTERM or SIGINT:
// stop accepting, answer what was accepted, exit 0 (a second one exits at once).
#include <csignal>
#include <thread>

#include "app_main.h"
#include "config_flags.h"
#include "core/parallel.h"
#include "core/stop_signal.h"
#include "decode/alignment.h"
#include "decode/alignment_choice.h"
#include "decode/translator.h"
#include "ensemble_flags.h"
#include "run/load_run.h"
#include "run_defaults.h"
#include "serve/http_server.h"
#include "serve/model_attention.h"
#include "serve/translator_backend.h"

namespace {

struct Flags {
  attn::apps::EnsembleFlags ensemble;  // --model, --checkpoint, --weights
  std::string precision;
  attn::apps::ConfigFlags config;  // --beam, --batch-size, --threads: keys of the runs' configs
  attn::serve::ServerOptions server;
  // The durations as whole numbers for their flags, their defaults the options' own.
  int max_batch_wait_ms = int(server.queue.max_wait.count()), header_timeout = int(server.header_timeout.count()),
      body_timeout = int(server.body_timeout.count()), write_timeout = int(server.write_timeout.count()),
      request_timeout = int(server.request_timeout.count());
};

// What /v1/translate's alignments may read: one model's cross attention, as attn-translate
// --alignments reads it (before the decoding thread starts: the model runs on one thread).
// A request's alignment fields default to the run's own extraction (RUN/alignment.json, else
// a guided run's guided head: decode::run_alignment_extraction).
void read_cross_attention(const attn::run::LoadedEnsemble& models, const std::string& run_dir,
                          attn::serve::ModelInfo& info) {
  if (models.runs.size() > 1) {
    info.no_alignments = "alignments read one model's attention, and this server runs an ensemble of " +
                         std::to_string(models.runs.size()) + " models";
    return;
  }
  info.cross_attention = attn::decode::cross_attention_shape(models.model());
  if (info.cross_attention.layers == 0) info.no_alignments = "the model has no cross attention to align with";
  info.alignment = attn::decode::run_alignment_extraction(run_dir, models.first().config);
}

int serve(Flags& flags) {
  // First, before any other thread starts: every thread (HTTP, decoding, attn's workers) inherits the
  // mask, and the stop signals are caught on a thread of their own (core/stop_signal.h).
  const attn::StopSignalRouting stop_signals;
  attn::install_stop_handlers();
  std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up is an error of its request, not the end
  const std::vector<std::string> model_dirs = flags.ensemble.resolved_model_dirs();
  // The languages before anything binds: a run without them fails at once.
  const std::string config_path = attn::run::run_paths(model_dirs.front(), true).config;
  const attn::io::Config config = flags.config.applied(attn::apps::run_config(model_dirs.front()));
  const attn::serve::LanguagePair languages = attn::serve::run_languages(config, config_path);
  // The queue's batches are the decoder's batches.
  flags.server.queue.batch_size = config.decode.batch_size;

  flags.server.header_timeout = std::chrono::seconds(flags.header_timeout);
  flags.server.body_timeout = std::chrono::seconds(flags.body_timeout);
  flags.server.write_timeout = std::chrono::seconds(flags.write_timeout);
  flags.server.request_timeout = std::chrono::seconds(flags.request_timeout);
  flags.server.queue.max_wait = std::chrono::milliseconds(flags.max_batch_wait_ms);
  attn::serve::HttpServer server(flags.server);
  const int port = server.bind();
  attn::on_stop_request([&server] {
    spdlog::info("stop requested: answering the requests accepted, then exiting");
    server.stop();
  });
  std::thread http([&server] { server.listen(); });
  spdlog::info("attn-serve listening on http://{}:{} (port {}); loading the model", flags.server.host, port, port);

  std::optional<attn::run::LoadedEnsemble> models;
  std::optional<attn::serve::TranslatorBackend> backend;
  std::optional<attn::serve::ModelAttention> attention;  // the explorer's maps: one model's, not an ensemble's
  try {
    attn::serve::ModelInfo info{languages, 0, model_dirs.front(), {}, {}, {}};
    // Loading measures auto precision at the thread count decoding will use.
    attn::set_parallel_threads(config.train.threads);
    models.emplace(attn::run::load_ensemble(model_dirs, flags.ensemble.checkpoints, flags.ensemble.weights,
                                            attn::apps::precision_flag(flags.precision)));
    read_cross_attention(*models, model_dirs.front(), info);
    const attn::run::LoadedRun& run = models->first();
    std::vector<attn::io::Config> configs;
    for (const attn::run::LoadedRun& member : models->runs) configs.push_back(flags.config.applied(member.config));
    std::vector<const attn::io::Config*> members;
    for (const attn::io::Config& member : configs) members.push_back(&member);
    attn::decode::TranslateOptions options = attn::decode::translate_options(members);
    options.batch_size = flags.server.queue.batch_size;
    options.search.nbest = 1;
    backend.emplace(models->model(), run.vocab->source, run.vocab->target, options, configs.front().train.threads);
    info.beam = options.search.beam;
    if (models->runs.size() == 1)
      attention.emplace(models->model(), run.vocab->source, run.vocab->target, options,
                        info.cross_attention.layers > 0 ? std::optional(info.alignment) : std::nullopt,
                        attn::serve::public_run_name(model_dirs.front()));
    server.set_backend(*backend, info, attention ? &*attention : nullptr);
    spdlog::info("ready: {} -> {}, beam {}, batches of up to {} sentences, precision {}", languages.source,
                 languages.target, options.search.beam, options.batch_size, attn::choice_name(run.precision));
  } catch (...) {
    server.stop();
    http.join();
    throw;
  }
  http.join();
  server.close();  // decodes what is left, stops the decoding thread
  attn::on_stop_request({});
  spdlog::info("attn-serve stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attn-serve: a translation server (LibreTranslate's HTTP API) over a trained attn model"};
  using attn::apps::at_least;
  Flags flags;
  attn::serve::ServerOptions& server = flags.server;
  server.limits.char_limit = 5000;  // LibreTranslate's public instance has a limit of this order
  server.limits.max_sentences = 1000;
  attn::apps::add_ensemble_flags(app, flags.ensemble);
  attn::apps::add_config_flag(app, "--beam", "decode.beam", flags.config);
  attn::apps::add_config_flag(app, "--batch-size", "decode.batch_size", flags.config,
                              "sentences per batch, gathered across requests");
  attn::apps::add_config_flag(app, "--repetition-penalty", "decode.repetition_penalty", flags.config);
  attn::apps::add_config_flag(app, "--prefix", "decode.prefix", flags.config,
                              "every translation starts with this text's target pieces (a request's \"prefix\" "
                              "replaces it)");
  attn::apps::add_precision_option(app, flags.precision);
  attn::apps::add_config_flag(app, "--threads", "train.threads", flags.config, "threads of decoding");
  app.add_option("--host", server.host, "address to listen on (127.0.0.1: this machine only)")->capture_default_str();
  app.add_option("--port", server.port, "port to listen on; 0 = any free port, logged at start")
      ->check(attn::apps::in_range(0, 65535))
      ->capture_default_str();
  app.add_option("--max-batch-wait-ms", flags.max_batch_wait_ms,
                 "how long a sentence may wait for others to fill its batch")
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--max-queue", server.queue.max_queue,
                 "sentences waiting at most; a request beyond gets 503 with Retry-After")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--max-body-bytes", server.max_body_bytes,
                 "largest request body (JSON, form or multipart; chunked or not); larger get 413")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--max-header-bytes", server.max_header_bytes,
                 "largest request line and headers together; larger get 431")
      ->check(at_least(256))
      ->capture_default_str();
  app.add_option("--max-attention-bytes", server.max_attention_bytes,
                 "largest answer of POST /v1/attention (the explorer's maps); larger get 413")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--char-limit", server.limits.char_limit,
                 "characters per request, all texts together (LibreTranslate's char_limit); 0 = none")
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--max-sentences", server.limits.max_sentences,
                 "sentences (non-empty lines, HTML text runs) per request; 0 = none")
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--api-keys", server.api_keys_file,
                 "file of API keys, one per line ('#' comments): requests need one (403 otherwise)")
      ->check(CLI::ExistingFile)
      ->capture_default_str();
  app.add_option("--rate-limit", server.rate_limit,
                 "requests per minute per API key (per IP address without one); beyond: 429; 0 = none")
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--header-timeout", flags.header_timeout,
                 "seconds a connection may take to send a request's line and headers, counted from its opening "
                 "(or its previous answer): a total, which a slow trickle of bytes does not extend; then it is "
                 "closed")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--body-timeout", flags.body_timeout,
                 "seconds a client may take to send a request's body, counted from the end of its headers: a total; "
                 "then the connection is closed")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--write-timeout", flags.write_timeout, "seconds a client may take to read an answer")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--request-timeout", flags.request_timeout,
                 "seconds a request may wait for its translations; then 503 and its sentences are dropped")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--http-threads", server.http_threads,
                 "requests handled at once (not connections: one io thread holds every connection); each waits for "
                 "its batch, so at least the requests expected in flight")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--max-connections", server.max_connections,
                 "client connections open at once; beyond, a new one gets 503 and is closed; 0 = as many as the "
                 "descriptor limit allows, its soft limit raised to the hard one")
      ->check(at_least(0))
      ->capture_default_str();
  return attn::apps::run_app(app, argc, argv, [&] { return serve(flags); });
}
