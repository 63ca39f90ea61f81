/*
 * c_example: a Sixty-Six bot in C with libzmq, written from protocol/PROTOCOL.md alone.
 *
 * It connects one DEALER socket to the arena (ARENA_ENDPOINT / --endpoint), with the token
 * (ARENA_TOKEN / --token) as its routing identity, says hello, and answers every request with
 * a simple rule: declare at 66 or more (the view's totals), else exchange the trump nine,
 * announce a marriage, draw rather than close, pass in the final window, and otherwise play
 * the last card offered. Every answer is one of the request's legal_actions. The bot keeps no
 * state between requests, so it can play several games at once (max_games 8).
 *
 * JSON handling is a tiny reader that finds a key of an object and walks arrays: enough for
 * the fields this bot needs ("v", "type", "seq", "game_id", "seat", "legal_actions",
 * "view" -> "totals", "reason", "detail"). Exit statuses follow the Python SDK: 0 after
 * shutdown, 2 usage, 3 rejected, 4 arena gone.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define BOT_NAME "c_example"
#define BOT_VERSION "1.0"
#define MAX_GAMES 8
#define MAX_MESSAGE_BYTES 65536
#define POLL_MS 1000
#define DEFAULT_IDLE_TIMEOUT_S 600.0

/* ------------------------------------------------------------------ a tiny JSON reader */

/* One JSON value as the text [p, end). */
typedef struct {
    const char *p;
    const char *end;
} span;

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* p at the opening quote; returns the position after the closing quote, or NULL. */
static const char *skip_string(const char *p, const char *end) {
    for (p++; p < end; p++) {
        if (*p == '\\') p++;
        else if (*p == '"') return p + 1;
    }
    return NULL;
}

/* Returns the position after the value that starts at p (whitespace skipped), or NULL. */
static const char *skip_value(const char *p, const char *end, int depth) {
    p = skip_ws(p, end);
    if (p >= end || depth > 64) return NULL;
    if (*p == '"') return skip_string(p, end);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = skip_ws(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (close == '}') { /* key : */
                p = skip_ws(p, end);
                if (p >= end || *p != '"' || !(p = skip_string(p, end))) return NULL;
                p = skip_ws(p, end);
                if (p >= end || *p != ':') return NULL;
                p++;
            }
            if (!(p = skip_value(p, end, depth + 1))) return NULL;
            p = skip_ws(p, end);
            if (p >= end) return NULL;
            if (*p == close) return p + 1;
            if (*p != ',') return NULL;
            p++;
        }
    }
    /* number, true, false, null: up to the next delimiter */
    const char *start = p;
    while (p < end && !strchr(",]} \t\r\n", *p)) p++;
    return p > start ? p : NULL;
}

static span trimmed(const char *p, const char *end) {
    span s = {skip_ws(p, end), end};
    while (s.end > s.p && strchr(" \t\r\n", s.end[-1])) s.end--;
    return s;
}

/* Whether the JSON string token s (with its quotes) spells exactly text (no escapes needed). */
static int string_is(span s, const char *text) {
    size_t n = strlen(text);
    return s.end - s.p == (long)n + 2 && s.p[0] == '"' && memcmp(s.p + 1, text, n) == 0;
}

/* The value of key in the object obj; 1 if found. */
static int object_get(span obj, const char *key, span *out) {
    const char *p = skip_ws(obj.p, obj.end);
    if (p >= obj.end || *p != '{') return 0;
    p = skip_ws(p + 1, obj.end);
    while (p < obj.end && *p == '"') {
        const char *key_end = skip_string(p, obj.end);
        if (!key_end) return 0;
        span k = {p, key_end};
        p = skip_ws(key_end, obj.end);
        if (p >= obj.end || *p != ':') return 0;
        const char *value = p + 1;
        const char *after = skip_value(value, obj.end, 0);
        if (!after) return 0;
        if (string_is(k, key)) {
            *out = trimmed(value, after);
            return 1;
        }
        p = skip_ws(after, obj.end);
        if (p < obj.end && *p == ',') p = skip_ws(p + 1, obj.end);
        else break;
    }
    return 0;
}

/* Item i (0-based) of the array arr; 1 if there is one. */
static int array_item(span arr, int i, span *out) {
    const char *p = skip_ws(arr.p, arr.end);
    if (p >= arr.end || *p != '[') return 0;
    p = skip_ws(p + 1, arr.end);
    for (int n = 0; p < arr.end && *p != ']'; n++) {
        const char *after = skip_value(p, arr.end, 0);
        if (!after) return 0;
        if (n == i) {
            *out = trimmed(p, after);
            return 1;
        }
        p = skip_ws(after, arr.end);
        if (p < arr.end && *p == ',') p = skip_ws(p + 1, arr.end);
    }
    return 0;
}

/* A JSON number (17 or 17.0) as a double; def when s is not a number. */
static double number(span s, double def) {
    char buf[64];
    size_t n = (size_t)(s.end - s.p);
    if (n == 0 || n >= sizeof buf) return def;
    memcpy(buf, s.p, n);
    buf[n] = 0;
    char *stop;
    double d = strtod(buf, &stop);
    return *stop ? def : d;
}

/* Copy the content of a JSON string token (escapes kept as written) into buf. */
static void string_copy(span s, char *buf, size_t size) {
    size_t n = s.end - s.p >= 2 ? (size_t)(s.end - s.p - 2) : 0;
    if (n >= size) n = size - 1;
    memcpy(buf, s.p + 1, n);
    buf[n] = 0;
}

/* ------------------------------------------------------------------ the strategy */

/* Picks one of the request's legal actions into out (a JSON string token, quotes included). */
static int choose(span request, span *out) {
    span legal, item, seat_s, view, totals, total_s;
    if (!object_get(request, "legal_actions", &legal) || !array_item(legal, 0, &item)) return 0;
    int seat = (int)number(object_get(request, "seat", &seat_s) ? seat_s : (span){0, 0}, 0);
    double total = 0;
    if (object_get(request, "view", &view) && object_get(view, "totals", &totals) &&
        array_item(totals, seat, &total_s))
        total = number(total_s, 0);

    span pick = item, last_play = {0, 0}, meld = {0, 0};
    int has_declare = 0, has_exchange = 0, has_draw = 0, has_pass = 0;
    span exchange = {0, 0}, draw = {0, 0}, pass = {0, 0}, declare = {0, 0};
    for (int i = 0; array_item(legal, i, &item); i++) {
        if (string_is(item, "declare")) { has_declare = 1; declare = item; }
        else if (string_is(item, "exchange")) { has_exchange = 1; exchange = item; }
        else if (string_is(item, "draw")) { has_draw = 1; draw = item; }
        else if (string_is(item, "pass")) { has_pass = 1; pass = item; }
        else if (item.end - item.p > 6 && memcmp(item.p, "\"meld ", 6) == 0) { if (!meld.p) meld = item; }
        else if (item.end - item.p > 6 && memcmp(item.p, "\"play ", 6) == 0) last_play = item;
    }
    if (has_declare && total >= 66) pick = declare;
    else if (has_exchange) pick = exchange;
    else if (meld.p) pick = meld;
    else if (has_draw) pick = draw;
    else if (has_pass) pick = pass;
    else if (last_play.p) pick = last_play;
    *out = pick;
    return 1;
}

/* ------------------------------------------------------------------ the connection */

static void say(const char *text, const char *more) {
    fprintf(stderr, "[%s pid %d] %s%s\n", BOT_NAME, (int)getpid(), text, more ? more : "");
    fflush(stderr);
}

/* Appends a JSON string literal of text (quotes, escapes) to buf. */
static void append_json_string(char *buf, size_t size, const char *text) {
    size_t n = strlen(buf);
    if (n + 2 >= size) return;
    buf[n++] = '"';
    for (; *text && n + 3 < size; text++) {
        if (*text == '"' || *text == '\\') buf[n++] = '\\';
        buf[n++] = *text;
    }
    buf[n++] = '"';
    buf[n] = 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int send_text(void *sock, const char *text) {
    return zmq_send(sock, text, strlen(text), 0) < 0 ? -1 : 0;
}

/* Handles one message; returns an exit status to stop, or -1 to go on. */
static int handle(void *sock, const char *data, size_t size, int *welcomed) {
    span msg = trimmed(data, data + size), v, type, field;
    if (!object_get(msg, "v", &v) || !object_get(msg, "type", &type)) {
        say("ignored a message without v and type", NULL);
        return -1;
    }
    if (v.end - v.p < 3 || memcmp(v.p, "\"1.", 3) != 0) {
        say("ignored a message of another protocol major version", NULL);
        return -1;
    }
    if (string_is(type, "welcome")) {
        *welcomed = 1;
    } else if (string_is(type, "reject")) {
        char reason[128] = "", detail[1100] = "";
        if (object_get(msg, "reason", &field)) string_copy(field, reason, sizeof reason);
        if (object_get(msg, "detail", &field)) string_copy(field, detail, sizeof detail);
        fprintf(stderr, "[%s] rejected by the arena: %s: %s\n", BOT_NAME, reason, detail);
        return 3;
    } else if (string_is(type, "shutdown")) {
        return 0;
    } else if (string_is(type, "request")) {
        span seq, game_id, action;
        if (!*welcomed) {
            say("ignored a request before the welcome", NULL);
        } else if (!object_get(msg, "seq", &seq) || !object_get(msg, "game_id", &game_id) ||
                   !choose(msg, &action)) {
            say("ignored a request without seq, game_id or legal_actions", NULL);
        } else {
            /* seq and game_id are copied exactly as they came (a number and a JSON string). */
            char reply[1024];
            int n = snprintf(reply, sizeof reply, "{\"v\":\"1.0\",\"type\":\"action\",\"seq\":%.*s,"
                             "\"game_id\":%.*s,\"action\":%.*s}", (int)(seq.end - seq.p), seq.p,
                             (int)(game_id.end - game_id.p), game_id.p, (int)(action.end - action.p), action.p);
            if (n < 0 || n >= (int)sizeof reply || send_text(sock, reply) < 0) {
                say("could not send an answer: ", zmq_strerror(zmq_errno()));
                return 4;
            }
        }
    }
    /* hand_over, match_over and unknown types: nothing to answer */
    return -1;
}

static const char *option(int argc, char **argv, const char *flag, const char *env) {
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], flag) == 0) return argv[i + 1];
    const char *value = getenv(env);
    return value && *value ? value : NULL;
}

int main(int argc, char **argv) {
    const char *endpoint = option(argc, argv, "--endpoint", "ARENA_ENDPOINT");
    const char *token = option(argc, argv, "--token", "ARENA_TOKEN");
    const char *idle = option(argc, argv, "--idle-timeout", "ARENA_IDLE_TIMEOUT_S");
    double idle_s = idle ? atof(idle) : DEFAULT_IDLE_TIMEOUT_S;
    if (!endpoint || !token || strlen(token) > 255) {
        say("no arena to connect to: give --endpoint/--token or ARENA_ENDPOINT/ARENA_TOKEN", NULL);
        return 2;
    }
    pid_t parent = getppid();
    void *ctx = zmq_ctx_new();
    void *sock = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0;
    int64_t max_size = MAX_MESSAGE_BYTES;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_ROUTING_ID, token, strlen(token));
    zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &max_size, sizeof max_size);
    int status = 4;
    if (zmq_connect(sock, endpoint) != 0) {
        say("cannot connect: ", zmq_strerror(zmq_errno()));
        status = 2;
        goto done;
    }
    char hello[1024] = "{\"v\":\"1.0\",\"type\":\"hello\",\"token\":";
    append_json_string(hello, sizeof hello, token);
    snprintf(hello + strlen(hello), sizeof hello - strlen(hello),
             ",\"name\":\"%s\",\"version\":\"%s\",\"capabilities\":{\"max_games\":%d}}",
             BOT_NAME, BOT_VERSION, MAX_GAMES);
    if (send_text(sock, hello) < 0) {
        say("cannot send the hello: ", zmq_strerror(zmq_errno()));
        goto done;
    }
    static char buffer[MAX_MESSAGE_BYTES + 1];
    int welcomed = 0;
    double heard = now_s();
    for (;;) {
        zmq_pollitem_t item = {sock, 0, ZMQ_POLLIN, 0};
        int ready = zmq_poll(&item, 1, POLL_MS);
        if (ready < 0 && zmq_errno() != EINTR) {
            say("poll failed: ", zmq_strerror(zmq_errno()));
            break;
        }
        if (ready <= 0) {
            if (getppid() != parent) { say("parent process is gone; exiting", NULL); break; }
            if (idle_s > 0 && now_s() - heard > idle_s) { say("nothing from the arena for a long time; exiting", NULL); break; }
            continue;
        }
        int n = zmq_recv(sock, buffer, MAX_MESSAGE_BYTES, ZMQ_DONTWAIT);
        if (n < 0) continue;
        heard = now_s();
        if (n > MAX_MESSAGE_BYTES) { say("ignored an oversized message", NULL); continue; }
        int code = handle(sock, buffer, (size_t)n, &welcomed);
        if (code >= 0) { status = code; break; }
    }
done:
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return status;
}
