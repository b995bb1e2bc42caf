# The cron wrapper's masking (docs/CONTRACT.md, "The cron wrapper"), line by line: everything cron/subrecon-nightly
# writes (its own lines, the arguments, subrecon's output as it streams into the log, the alert line) goes through it.
# Fast enough for a night's log (about 20 000 lines a second; bash's regular expressions manage a few hundred).
# SUBRECON_NIGHTLY_MASK holds the secret values the wrapper knows, one a line (the values of the variables
# `subrecon secret-names` names, and of the arguments masked), each masked wherever it appears. Then, in this order:
#   - URL credentials: scheme://user:password@ → scheme://user:***@, scheme://token@ → scheme://***@;
#   - NAME=value where NAME looks secret (password=, sslpassword=, api_key=, --token=) → NAME=***;
#   - Bearer TOKEN, Basic TOKEN → Bearer ***, Basic ***;
#   - words shaped like a key: 16 characters or more with a key's prefix (sk_live_…, rk_…, sk-…, a JWT, ghp_…,
#     xoxb-…, AKIA…, AIza…, ya29.…), or 32 or more letters and digits (both) without one, a UUID or a word holding a
#     run id (a run folder's path) excepted. A word is a run of letters, digits and + / _ . - (so `--opt=KEY`,
#     'KEY' and "KEY" are found); a sentence's full stop is not part of it.
# POSIX awk only, no interval expressions: mawk, gawk and busybox run it; fflush keeps the log streaming.
BEGIN {
    n = split(ENVIRON["SUBRECON_NIGHTLY_MASK"], parts, "\n")
    nsecrets = 0
    for (i = 1; i <= n; i++) if (length(parts[i]) >= 6) secrets[++nsecrets] = parts[i]
    key_prefix = "^((sk|rk|pk)_|sk-|eyJ[A-Za-z0-9_-]+\\.|gh[pousr]_|xox[abposr]-|AKIA|AIza|ya29\\.)"
    run_id = "[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]Z"
    uuid = "^[0-9A-Fa-f]+-[0-9A-Fa-f]+-[0-9A-Fa-f]+-[0-9A-Fa-f]+-[0-9A-Fa-f]+$"
}
function literal(text, value,    out, i) {
    out = ""
    while ((i = index(text, value)) > 0) {
        out = out substr(text, 1, i - 1) "***"
        text = substr(text, i + length(value))
    }
    return out text
}
function urls(text,    out, info, colon, start, len) {
    out = ""
    while (match(text, /[A-Za-z0-9+.-]:\/\/[^ \t\r\f\v]*@/)) {
        start = RSTART; len = RLENGTH
        info = substr(text, start + 4, len - 5)
        colon = index(info, ":")
        if (colon > 0 && index(substr(info, 1, colon - 1), "/") == 0) info = substr(info, 1, colon - 1) ":***"
        else info = "***"
        out = out substr(text, 1, start + 3) info "@"
        text = substr(text, start + len)
    }
    return out text
}
function pairs(text,    out, lower, start, len, eq) {
    out = ""
    lower = tolower(text)
    if (lower !~ /(pass|pwd|secret|token|key|credential|auth|private|signature|cookie|session)[a-z0-9_.-]*=/) return text
    while (match(lower, /[a-z0-9_.-]*(pass|pwd|secret|token|key|credential|auth|private|signature|cookie|session)[a-z0-9_.-]*=[^&; \t\r\f\v]*/)) {
        start = RSTART; len = RLENGTH
        eq = index(substr(lower, start, len), "=")
        out = out substr(text, 1, start + eq - 1) "***"
        text = substr(text, start + len)
        lower = substr(lower, start + len)
    }
    return out text
}
function schemes(text,    out, lower, start, len, head) { # Bearer TOKEN, Basic TOKEN
    out = ""
    lower = tolower(text)
    while (match(lower, /(bearer|basic)[ \t\r\f\v]+[^ \t\r\f\v]+/)) {
        start = RSTART; len = RLENGTH
        if (start > 1 && substr(lower, start - 1, 1) ~ /[a-z0-9_]/) {
            out = out substr(text, 1, start); text = substr(text, start + 1); lower = substr(lower, start + 1)
            continue
        }
        head = substr(text, start, len)
        match(head, /^[A-Za-z]+[ \t\r\f\v]+/)
        out = out substr(text, 1, start - 1) substr(head, 1, RLENGTH) "***"
        text = substr(text, start + len)
        lower = substr(lower, start + len)
    }
    return out text
}
function random(word) {
    return length(word) >= 32 && word ~ /^[A-Za-z0-9+_-][A-Za-z0-9+\/_-]*$/ && word ~ /[0-9]/ && word ~ /[A-Za-z]/ &&
        !(length(word) == 36 && word ~ uuid) && word !~ run_id
}
function words(text,    out, word, tail) {
    out = ""
    while (match(text, /[A-Za-z0-9+\/_.-]+/)) {
        out = out substr(text, 1, RSTART - 1)
        word = substr(text, RSTART, RLENGTH)
        text = substr(text, RSTART + RLENGTH)
        tail = ""
        while (word ~ /\.$/) { tail = "." tail; word = substr(word, 1, length(word) - 1) }
        if (length(word) >= 16 && (word ~ key_prefix || random(word))) word = "***"
        out = out word tail
    }
    return out text
}
{
    line = $0
    for (i = 1; i <= nsecrets; i++) line = literal(line, secrets[i])
    print words(schemes(pairs(urls(line))))
    fflush()
}
