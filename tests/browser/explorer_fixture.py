"""What the explorer's browser test and tools/bench-explorer.py share: a tiny trained run, an
attn-serve on it, and headless Chromium driven by Selenium (Debian's chromium,
chromium-driver and python3-selenium; tools/install-deps.sh)."""
import json
import os
import random
import re
import shutil
import subprocess
import time
import urllib.request

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def browser_missing():
    """Why the browser cannot run here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            return path + " is missing (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "python3-selenium is missing (apt-get install python3-selenium)"
    return None


def synthetic_corpus(sentences, seed):
    """A made-up language pair, each target the word-by-word translation of its source reversed
    (as tests/apps/app_fixtures.h's synthetic_corpus)."""
    onsets, vowels = "ktrmslpndv", "aoi"
    source_words = [o + v + "n" for o in onsets for v in vowels]
    target_words = [v + o + "e" for o in onsets for v in vowels]
    rng = random.Random(seed)
    src, tgt = [], []
    for _ in range(sentences):
        words = [rng.randrange(len(source_words)) for _ in range(3 + rng.randrange(5))]
        src.append(" ".join(source_words[w] for w in words))
        tgt.append(" ".join(target_words[w] for w in reversed(words)))
    return src, tgt


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))


def train_tiny_run(bin_dir, work, steps=30, model_type="transformer", max_positions=64):
    """A tiny run in work/run (as tests/tiny_config.h's), trained for `steps` steps; its path."""
    os.makedirs(work, exist_ok=True)
    for name, (count, seed) in {"train": (200, 1), "valid": (20, 2)}.items():
        src, tgt = synthetic_corpus(count, seed)
        write_lines(os.path.join(work, name + ".src"), src)
        write_lines(os.path.join(work, name + ".tgt"), tgt)
    run = os.path.join(work, "run")
    shutil.rmtree(run, ignore_errors=True)
    config = {
        "output_dir": run,
        "languages": {"source": "en", "target": "it"},
        "data": {"train_src": os.path.join(work, "train.src"), "train_tgt": os.path.join(work, "train.tgt"),
                 "valid_src": os.path.join(work, "valid.src"), "valid_tgt": os.path.join(work, "valid.tgt"),
                 "max_len": 40},
        "vocab": {"type": "unigram", "size": 64, "joint": True},
        "model": {"type": model_type,
                  "transformer": {"d_model": 16, "heads": 2, "ffn_dim": 32, "encoder_layers": 1,
                                  "decoder_layers": 2, "max_positions": max_positions},
                  "rnn": {"embedding_dim": 16, "encoder_hidden": 8, "decoder_hidden": 16, "attention_dim": 8}},
        "train": {"threads": 1, "valid_metric": "loss", "batch_tokens": 256, "max_steps": steps,
                  "valid_every": 10, "save_every": 10, "log_every": 5, "learning_rate": 0.01, "warmup_steps": 10},
        "decode": {"beam": 2, "batch_size": 3},
    }
    config_path = os.path.join(work, "config.json")
    with open(config_path, "w") as f:
        json.dump(config, f, indent=2)
    subprocess.run([os.path.join(bin_dir, "attn-train"), "--config", config_path], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return run


class Server:
    """attn-serve on `run`, on a free port of 127.0.0.1; stopped with SIGTERM."""

    def __init__(self, bin_dir, run, work, flags=()):
        self.log_path = os.path.join(work, "attn-serve.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([os.path.join(bin_dir, "attn-serve"), "--model", run, "--port", "0",
                                         "--threads", "1", *flags], stdout=self.log, stderr=self.log)
        self.url = None
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("attn-serve exited:\n" + open(self.log_path).read())
            match = re.search(r"listening on (http://127\.0\.0\.1:[0-9]+)", open(self.log_path).read())
            if match and self._healthy(match.group(1)):
                self.url = match.group(1)
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("attn-serve did not become ready:\n" + open(self.log_path).read())

    @staticmethod
    def _healthy(url):
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def post(self, path, body):
        request = urllib.request.Request(self.url + path, json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)
        self.log.close()


def chromium(width=1400, height=1000):
    """Headless Chromium whose console the test reads (get_log("browser"))."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=%d,%d" % (width, height), "--allow-file-access-from-files"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
