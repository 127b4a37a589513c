#!/usr/bin/env bash
# Writes test/vectors/signatures.json: signature test vectors computed with OpenSSL alone, so that
# they check any implementation of the signatures (D22, D23, D28) independently of this package.
#
#   scripts/make-vectors.sh            write the file
#   scripts/make-vectors.sh --check    exit 1 if the file differs from what this script writes
#
# Needs bash, openssl, base64, head, tr, yes, cmp and mktemp.
#
# Each body is written byte for byte to a file, and the signature is
#   cat <inputs> | openssl dgst -sha256 -binary | base64
# The JSON names each body in one of three language-neutral ways (see the "format" field below).

set -euo pipefail
export LC_ALL=C

root=$(cd "$(dirname "$0")/.." && pwd)
target="$root/test/vectors/signatures.json"

mode=write
case "${1-}" in
  '') ;;
  --check) mode=check ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
body="$work/body"
out="$work/signatures.json"

digest() {
  openssl dgst -sha256 -binary | base64
}

# Sets REPLY to the JSON string literal of $1. Bytes of 0x80 and above pass through unchanged (the
# inputs here are valid UTF-8); the control characters that occur are escaped, any other is an error.
json() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  if [[ $s == *[$'\x01'-$'\x1f']* ]]; then
    echo "make-vectors: unsupported control character in a JSON string" >&2
    exit 1
  fi
  REPLY="\"$s\""
}

first=1
emit() {
  if [[ $first == 1 ]]; then first=0; else printf ',\n' >>"$out"; fi
  printf '    { %s }' "$1" >>"$out"
}

# The body of the next vector, given as text (encoded as UTF-8), as bytes (a printf format of
# escapes, emitted as base64), or as a pattern repeated up to a byte count.
body_json=
body_utf8() {
  printf '%s' "$1" >"$body"
  json "$1"
  body_json="{ \"utf8\": $REPLY }"
}
body_bytes() {
  # shellcheck disable=SC2059 # the format is the point: it holds the escapes of the bytes.
  printf "$1" >"$body"
  body_json="{ \"base64\": \"$(base64 <"$body" | tr -d '\n')\" }"
}
body_repeat() {
  # `yes` stops with SIGPIPE once `head` has read enough, hence the subshell without pipefail.
  (set +o pipefail; yes "$1" | tr -d '\n' | head -c "$2" >"$body")
  local size
  size=$(wc -c <"$body" | tr -d ' ')
  if [[ $size != "$2" ]]; then
    echo "make-vectors: the repeated body has $size bytes, expected $2" >&2
    exit 1
  fi
  json "$1"
  body_json="{ \"repeat\": $REPLY, \"bytes\": $2 }"
}

# Appends '"name": value' to $fields, the value as a JSON string.
fields=
field() {
  json "$2"
  fields+="${fields:+, }\"$1\": $REPLY"
}

# web NAME PATH_AND_QUERY KEY  (the body of the last body_* call)
web() {
  local signature
  signature=$({ cat "$body"; printf '%s%s' "$2" "$3"; } | digest)
  fields=
  field name "$1"
  fields+=", \"kind\": \"web\", \"body\": $body_json"
  field pathAndQuery "$2"
  field key "$3"
  field signature "$signature"
  emit "$fields"
}

# sdk NAME KEY  (the body of the last body_* call)
sdk() {
  local signature
  signature=$({ cat "$body"; printf '%s' "$2"; } | digest)
  fields=
  field name "$1"
  fields+=", \"kind\": \"sdk\", \"body\": $body_json"
  field key "$2"
  field signature "$signature"
  emit "$fields"
}

# status NAME TRANSACTION_ID STATUS KEY
status() {
  local signature
  signature=$(printf '%s%s%s' "$2" "$3" "$4" | digest)
  fields=
  field name "$1"
  field kind status
  field transactionId "$2"
  field status "$3"
  field key "$4"
  field signature "$signature"
  emit "$fields"
}

# Non-ASCII text is written as UTF-8 byte escapes, so that the bytes do not depend on an editor.
key='test-private-key-0123456789'
# "clé-ключ-कुंजी-" and U+1F511 (key emoji)
utf8_key=$'cl\xc3\xa9-\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87-\xe0\xa4\x95\xe0\xa5\x81\xe0\xa4\x82\xe0\xa4\x9c\xe0\xa5\x80-\xf0\x9f\x94\x91'
json_body='{"id":"txn_001","amount":10000,"user":{"name":"Asha Rao","phoneNumber":"+919876543210"}}'
# "नमस्ते दुनिया" (vowel signs and a virama are combining characters)
namaste=$'\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87 \xe0\xa4\xa6\xe0\xa5\x81\xe0\xa4\xa8\xe0\xa4\xbf\xe0\xa4\xaf\xe0\xa4\xbe'
# "मुंबई"
mumbai=$'\xe0\xa4\xae\xe0\xa5\x81\xe0\xa4\x82\xe0\xa4\xac\xe0\xa4\x88'
# U+1F642, then U+1F469 U+200D U+1F4BB (a ZWJ sequence), then U+1F1EE U+1F1F3 (a flag)
emoji=$'\xf0\x9f\x99\x82\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb\xf0\x9f\x87\xae\xf0\x9f\x87\xb3'
# U+00E9, and U+0065 U+0301: the same text in NFC and NFD
e_nfc=$'\xc3\xa9'
e_nfd=$'e\xcc\x81'
# "Zalgo": letters with stacked combining marks (U+0324 U+0354 U+0367 U+0308 U+0356 U+0311 U+0303)
zalgo=$'Z\xcc\xa4\xcd\x94\xcd\xa7a\xcc\x88\xcd\x96\xcc\x91lgo\xcc\x83'
# U+0904 (3 bytes) and U+1F642 (4 bytes): 1 MiB of them ends inside a UTF-8 sequence
devanagari_emoji=$'\xe0\xa4\x84\xf0\x9f\x99\x82'

cat >"$out" <<'EOF'
{
  "description": "Signature test vectors of the pay-later service (D22, D23, D28), computed with OpenSSL by scripts/make-vectors.sh. web: base64(SHA-256(body + pathAndQuery + key)); sdk: base64(SHA-256(body + key)); status: base64(SHA-256(transactionId + status + key)), no separator. Strings are UTF-8 without normalisation; base64 is standard with padding.",
  "format": {
    "body.utf8": "the body is the UTF-8 encoding of this string",
    "body.base64": "the body is these bytes, standard base64",
    "body.repeat": "the body is the UTF-8 encoding of this string repeated, cut to exactly body.bytes bytes"
  },
  "vectors": [
EOF

# Web-initiated flow: bodies.
body_utf8 ''
web 'web: empty body (status check GET)' '/api/transaction/status?id=txn_001' "$key"
body_utf8 "$json_body"
web 'web: ASCII JSON, path without query' '/api/transaction' "$key"
body_utf8 "{\"note\":\"$namaste\"}"
web 'web: Devanagari body' '/api/transaction' "$key"
body_bytes '\xff\xfe\x00\x80caf\xe9\x0a'
web 'web: bytes that are not UTF-8' '/api/transaction' "$key"
body_repeat 'abc' 1048576
web 'web: body of exactly 1 MiB' '/api/transaction' "$key"
body_utf8 '{"transactionId":"txn_001","amount":5000}'
web 'web: refund' '/api/refund' "$key"

# Web-initiated flow: paths and queries, exactly as sent.
body_utf8 "$json_body"
web 'web: percent-encoded space' '/api/transaction?a=b%20c' "$key"
web 'web: lower-case percent-encoding kept as sent' '/api/transaction?redirect=https%3a%2f%2fshop.example%2fdone' "$key"
web 'web: upper-case percent-encoding kept as sent' '/api/transaction?redirect=https%3A%2F%2Fshop.example%2Fdone' "$key"
web 'web: percent-encoded UTF-8 in the path' '/api/transaction/status?id=txn%E0%A4%A8' "$key"
web 'web: plus in the query' '/api/transaction?q=a+b&sum=1+1%2B1' "$key"
web 'web: repeated query keys' '/api/transaction?tag=a&tag=b&tag=a' "$key"
web 'web: path prefix' '/sandbox/api/transaction?x=1' "$key"
web 'web: empty query' '/api/transaction?' "$key"
web 'web: UTF-8 key' '/api/transaction?x=1' "$utf8_key"

# SDK flow and gateway webhooks (D23).
body_utf8 ''
sdk 'sdk: empty body' "$key"
body_utf8 "$json_body"
sdk 'sdk: ASCII JSON' "$key"
sdk 'sdk: ASCII JSON, gateway webhook keyed with a Transactional API password' 'tApiPassw0rd/+=Example'
body_utf8 "$json_body"$'\n'
sdk 'sdk: ASCII JSON with a trailing newline' "$key"
body_utf8 $'{\n\t"amount": 10000,\r\n  "id": "txn_001"\n}'
sdk 'sdk: JSON with tabs, CRLF and LF' "$key"
body_utf8 "{\"city\":\"$mumbai\",\"note\":\"$namaste\"}"
sdk 'sdk: Devanagari' "$key"
body_utf8 "{\"emoji\":\"$emoji\"}"
sdk 'sdk: emoji, a ZWJ sequence and a flag' "$key"
body_utf8 "{\"name\":\"$e_nfc\"}"
sdk 'sdk: precomposed e-acute (NFC)' "$key"
body_utf8 "{\"name\":\"$e_nfd\"}"
sdk 'sdk: e and a combining acute (NFD), not normalised' "$key"
body_utf8 "{\"name\":\"$zalgo\"}"
sdk 'sdk: stacked combining marks' "$key"
body_utf8 '{"quote":"\"","backslash":"\\"}'
sdk 'sdk: quotes and backslashes' "$key"
body_bytes '\x00\x01\x02\x03\xc3\x28\xa0\xa1\xf0\x28\x8c\x28'
sdk 'sdk: bytes that are not UTF-8' "$key"
body_repeat 'abc' 1048576
sdk 'sdk: body of exactly 1 MiB' "$key"
body_repeat "$devanagari_emoji" 1048576
sdk 'sdk: body of exactly 1 MiB ending inside a UTF-8 sequence' "$key"
body_utf8 "$json_body"
sdk 'sdk: UTF-8 key' "$utf8_key"

# Callbacks, web status answer and web webhook (D22).
status 'status: SUCCESS' 'txn_001' 'SUCCESS' "$key"
status 'status: FAILURE' 'txn_001' 'FAILURE' "$key"
status 'status: CANCELLED' 'txn_001' 'CANCELLED' "$key"
status 'status: PENDING' 'txn_001' 'PENDING' "$key"
status 'status: id of 64 characters' 'A-z_0123456789-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW' 'SUCCESS' "$key"
status 'status: UTF-8 key' 'txn_001' 'SUCCESS' "$utf8_key"

printf '\n  ]\n}\n' >>"$out"

if [[ $mode == check ]]; then
  if cmp -s "$out" "$target"; then
    echo "make-vectors: $target is up to date"
  else
    echo "make-vectors: $target differs from what scripts/make-vectors.sh writes" >&2
    exit 1
  fi
else
  mkdir -p "$(dirname "$target")"
  cp "$out" "$target"
  echo "make-vectors: wrote $target"
fi
