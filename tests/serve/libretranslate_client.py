#!/usr/bin/env python3
"""A LibreTranslate client as its official Python client (LibreTranslate-py) sends requests:
form-encoded POST bodies through urllib, the api_key among the fields.

    libretranslate_client.py PORT API_KEY TEXT

Run by tests/apps/test_serve.cpp against attn-serve. Prints "translated: TEXT" and exits 0 when
/languages, /frontend/settings and /translate answer as LibreTranslate does; 1 otherwise.
"""
import json
import sys
import urllib.parse
import urllib.request


def post(url, fields):
    data = urllib.parse.urlencode(fields).encode()
    request = urllib.request.Request(url, data=data, method="POST")  # urllib's default: form-urlencoded
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read().decode())


def get(url):
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read().decode())


def main():
    port, key, text = sys.argv[1], sys.argv[2], sys.argv[3]
    base = f"http://127.0.0.1:{port}"
    languages = get(base + "/languages")
    source = languages[0]["code"]
    target = languages[0]["targets"][0]
    settings = get(base + "/frontend/settings")
    assert settings["keyRequired"] is True, settings
    assert settings["language"]["source"]["code"] == source, settings
    answer = post(base + "/translate", {"q": text, "source": source, "target": target, "api_key": key})
    assert isinstance(answer["translatedText"], str), answer
    try:
        post(base + "/translate", {"q": "kan", "source": source, "target": target, "api_key": key + "x"})
        print("a wrong key was accepted")
        return 1
    except urllib.error.HTTPError as error:
        body = json.loads(error.read().decode())
        assert error.code == 403 and body["error"] == "Invalid API key", (error.code, body)
    print("translated: " + answer["translatedText"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
