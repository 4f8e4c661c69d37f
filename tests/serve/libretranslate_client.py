#!/usr/bin/env python3
"""LibreTranslate's clients against attn-serve, sending the requests they send.

    libretranslate_client.py PORT API_KEY TEXT

- The official Python client (libretranslatepy 2.x): every call a urllib request whose body is
  the url-encoded fields (urllib's default type, application/x-www-form-urlencoded), POST for
  translate(q, source, target) and detect(q), GET with the fields as its body for languages();
  the api_key among the fields when the client has one. `OfficialClient` builds each request as
  that library does (it is not installed here: the test needs no package index).
- LibreTranslate's web page and its API documentation: JSON bodies with q, source, target,
  format and api_key; GET /frontend/settings.

Run by tests/apps/test_serve.cpp against attn-serve. Prints "translated: TEXT" and exits 0 when
every answer has LibreTranslate's form; 1 otherwise.
"""
import json
import sys
import urllib.error
import urllib.parse
import urllib.request


class OfficialClient:
    """The requests of libretranslatepy's LibreTranslateAPI, one method per call."""

    def __init__(self, url, api_key=None):
        self.url = url if url.endswith("/") else url + "/"
        self.api_key = api_key

    def _fields(self, fields):
        if self.api_key is not None:
            fields["api_key"] = self.api_key
        return urllib.parse.urlencode(fields).encode()

    def _send(self, request):
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read().decode())

    def translate(self, q, source="en", target="es"):
        body = self._fields({"q": q, "source": source, "target": target})
        return self._send(urllib.request.Request(self.url + "translate", data=body))["translatedText"]

    def detect(self, q):
        body = self._fields({"q": q})
        return self._send(urllib.request.Request(self.url + "detect", data=body))

    def languages(self):
        body = self._fields({})
        return self._send(urllib.request.Request(self.url + "languages", data=body, method="GET"))


def post_json(url, fields):
    request = urllib.request.Request(url, data=json.dumps(fields).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read().decode())


def main():
    port, key, text = sys.argv[1], sys.argv[2], sys.argv[3]
    base = f"http://127.0.0.1:{port}"
    client = OfficialClient(base, api_key=key)

    languages = client.languages()
    source = languages[0]["code"]
    target = languages[0]["targets"][0]
    assert all(set(language) >= {"code", "name"} for language in languages), languages
    detected = client.detect(text)
    assert detected == [{"confidence": 100.0, "language": source}], detected
    translated = client.translate(text, source, target)
    assert isinstance(translated, str), translated
    try:
        OfficialClient(base, api_key=key + "x").translate("kan", source, target)
        print("a wrong key was accepted")
        return 1
    except urllib.error.HTTPError as error:
        body = json.loads(error.read().decode())
        assert error.code == 403 and body["error"] == "Invalid API key", (error.code, body)

    # The web page's requests.
    with urllib.request.urlopen(base + "/frontend/settings", timeout=60) as response:
        settings = json.loads(response.read().decode())
    assert settings["keyRequired"] is True, settings
    assert settings["language"]["source"]["code"] == source, settings
    answer = post_json(base + "/translate",
                       {"q": text, "source": "auto", "target": target, "format": "text", "api_key": key})
    assert answer["translatedText"] == translated, (answer, translated)
    assert answer["detectedLanguage"] == {"confidence": 100.0, "language": source}, answer
    print("translated: " + translated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
