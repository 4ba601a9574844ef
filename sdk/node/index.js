"use strict";
/**
 * Pyramid Arena bot SDK for Node.js.
 *
 * Subclass `Bot`, write `declare(obs)` and `play(obs)` (plain values or Promises), call `run(bot)`.
 * The protocol is loaded at run time from the package's own copy of pyramid/v1/pyramid.proto (in proto/
 * beside this file, a copy of the repository's proto/ that a test keeps identical), so nothing is
 * generated and the package works wherever it is installed; see docs/PROTOCOL.md for the messages and
 * docs/WRITING_A_BOT.md for a walk-through. Type declarations for the bot API are in index.d.ts.
 */
const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");
const tls = require("node:tls");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTOCOL_VERSION = 1;
/** Where pyramid/v1/pyramid.proto is read from: the package's own copy, unless PYRAMID_PROTO_ROOT says otherwise. */
const PROTO_ROOT = process.env.PYRAMID_PROTO_ROOT || path.join(__dirname, "proto");
const RANKS = "9TJQKA";
const SUITS = "SHDC";
const SUIT_NAMES = { S: "SUIT_SPADES", H: "SUIT_HEARTS", D: "SUIT_DIAMONDS", C: "SUIT_CLUBS" };
const SUIT_LETTERS = Object.fromEntries(Object.entries(SUIT_NAMES).map(([letter, name]) => [name, letter]));
const PHASES = {
  PHASE_DECLARE: "declare",
  PHASE_PLAY: "play",
  PHASE_DEAL_OVER: "deal-over",
  PHASE_MATCH_OVER: "match-over",
};

/** Rank strength of a card code, 0 (nine) to 5 (ace): `rank("QS") === 3`. */
function rank(card) {
  return RANKS.indexOf(card[0]);
}

/** Suit letter of a card code: `suit("QS") === "S"`. */
function suit(card) {
  return card[1];
}

let cachedPackage = null;

/** The `pyramid.v1` package, loaded once from the .proto file. */
function protocol() {
  if (cachedPackage === null) {
    const definition = protoLoader.loadSync("pyramid/v1/pyramid.proto", {
      includeDirs: [PROTO_ROOT],
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    cachedPackage = grpc.loadPackageDefinition(definition).pyramid.v1;
  }
  return cachedPackage;
}

function actionFromWire(action) {
  if (action.kind === "declare") {
    return { declare: { tricks: action.declare.tricks, trump: SUIT_LETTERS[action.declare.trump] } };
  }
  return { card: action.card };
}

function trickFromWire(trick) {
  return { leader: trick.leader, cards: trick.cards, winner: trick.winner === undefined ? null : trick.winner };
}

/**
 * The seat's view as a plain object with card codes ("QS") and suit letters ("H").
 * Fields follow the protocol's Observation in camelCase, plus helpers: `legalCards`,
 * `legalDeclarations`, `trump`, `declared`, `isDeclarer`, `myTurn`, `unseenCards`.
 */
function observationFromWire(message, rules, legalActions = []) {
  const declaration = message.declaration
    ? { tricks: message.declaration.tricks, trump: SUIT_LETTERS[message.declaration.trump] }
    : null;
  const legal = legalActions.map(actionFromWire);
  const tricks = message.tricks.map(trickFromWire);
  const currentTrick = trickFromWire(message.current_trick || { leader: message.declarer, cards: [] });
  const obs = {
    seat: message.seat,
    rules,
    phase: PHASES[message.phase],
    dealNumber: message.deal_number,
    dealer: message.dealer,
    declarer: message.declarer,
    toAct: message.to_act === undefined ? null : message.to_act,
    hand: message.hand,
    declaration,
    currentTrick,
    tricks,
    taken: message.taken,
    pyramids: message.pyramids.map((p) => ({
      entries: p.entries.map((e) => ({ declared: e.declared, taken: e.taken, points: e.points })),
      remaining: p.remaining,
      total: p.total,
    })),
    talk: message.talk.map((m) => ({ seat: m.seat, trick: m.trick, text: m.text })),
    forfeited: message.forfeited,
    legalActions: legal,
    legalCards: legal.filter((a) => a.card).map((a) => a.card),
    legalDeclarations: legal.filter((a) => a.declare).map((a) => a.declare),
    trump: declaration ? declaration.trump : null,
    declared: declaration ? declaration.tricks : null,
    isDeclarer: message.declarer === message.seat,
    myTurn: message.to_act === message.seat,
  };
  const played = new Set([...tricks.flatMap((t) => t.cards), ...currentTrick.cards]);
  const held = new Set(obs.hand);
  obs.unseenCards = [...SUITS].flatMap((s) => [...RANKS].map((r) => r + s)).filter((c) => !played.has(c) && !held.has(c));
  return obs;
}

/**
 * The time this seat has for the decision, as the referee counts it (from sending the request until the
 * reply arrives, so the wire counts too: aim a little before `deadline`). `receivedAt` and `deadline` are
 * `performance.now()` readings in milliseconds.
 */
function clockFromWire(request, receivedAt) {
  const perActionMs = request.per_action_ms || 0;
  const bankMs = request.bank_ms || 0;
  return { perActionMs, bankMs, timeLeftMs: perActionMs + bankMs, receivedAt, deadline: receivedAt + perActionMs + bankMs };
}

function rulesFromWire(rules) {
  return {
    players: rules.players,
    trickWinner: rules.trick_winner === "TRICK_WINNER_HIGHEST_RANK" ? "highest-rank" : "led-suit",
    talk: { TALK_MODE_OPEN: "open", TALK_MODE_DEFENDERS: "defenders", TALK_MODE_OFF: "off" }[rules.talk],
    talkMaxLength: rules.talk_max_length,
    talkMaxPerTrick: rules.talk_max_per_trick,
  };
}

/** Base class of a bot: override `declare` and `play`; the other hooks are optional. */
class Bot {
  constructor() {
    this.name = "node-bot";
    this.version = "0";
  }

  /** A match begins: `info.seed` seeds this bot's randomness, `info.seat` is its seat. */
  matchStart(info) {} // eslint-disable-line no-unused-vars

  /** Return `{tricks, trump}`, one of `obs.legalDeclarations` (trump as a letter S H D C). */
  declare(obs) {
    throw new Error(`${this.constructor.name} must implement declare()`, { cause: obs });
  }

  /** Return a card code from `obs.legalCards`, or `{card, talk}` to talk as a defender. */
  play(obs) {
    throw new Error(`${this.constructor.name} must implement play()`, { cause: obs });
  }

  /** A deal is over: `obs` shows all six tricks and the updated pyramids. */
  dealEnd(obs) {} // eslint-disable-line no-unused-vars

  /**
   * Adds a line to the debug text sent with this bot's next answer, for its author: it never changes the
   * play and no other seat sees it; the referee keeps it apart (`referee logs LEAGUE ENTRANT`), at most
   * MAX_DEBUG_BYTES per answer. A line written in `matchStart` or `dealEnd` goes with the next answer.
   */
  debug(text) {
    addDebugLine(this, text);
  }

  /** The match is over: `result` has `totals`, `ranks` and this bot's `faults`. */
  matchEnd(result) {} // eslint-disable-line no-unused-vars
}

/** Characters of a thrown error sent with an action-less reply (ActionReply.error). */
const MAX_ERROR = 200;

/** Bytes of UTF-8 of one answer's debug text the referee keeps (ActionReply.debug); a longer one is not sent. */
const MAX_DEBUG_BYTES = 1024;
/** Bytes of debug text the referee keeps of one seat in one match. */
const MAX_DEBUG_PER_MATCH = 64 * 1024;
const DEBUG_LINES = Symbol("pyramid debug lines");

/** Adds `text` to the lines `bot` sends with its next answer (any object: a bot need not extend Bot). */
function addDebugLine(bot, text) {
  if (!bot[DEBUG_LINES]) bot[DEBUG_LINES] = [];
  bot[DEBUG_LINES].push(String(text));
}

/**
 * The debug text `bot` collected since the last call, its lines joined by line breaks, and forgets them:
 * "" if none, or if it is over MAX_DEBUG_BYTES (then a line on stderr says so: the referee would not keep it).
 */
function takeDebug(bot) {
  const lines = bot[DEBUG_LINES];
  if (!lines || lines.length === 0) return "";
  bot[DEBUG_LINES] = [];
  const text = lines.join("\n"); // a lone surrogate goes as U+FFFD: the wire is UTF-8
  const size = Buffer.byteLength(text, "utf8");
  if (size <= MAX_DEBUG_BYTES) return text;
  console.error(`${bot.name}: debug text of ${size} bytes not sent: the referee keeps at most ${MAX_DEBUG_BYTES} bytes per answer`);
  return "";
}

/**
 * What a bot's method threw, as the SDK reports it to the referee (ActionReply.error): its name and
 * message on one line of at most MAX_ERROR characters; the referee's fault then reads
 * "the bot raised Error: ...". Anything thrown counts, not only Errors.
 */
function errorLine(error) {
  const described =
    error instanceof Error ? (error.message ? `${error.name}: ${error.message}` : error.name) : `thrown: ${String(error)}`;
  const text = described
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .join(" | ");
  const chars = [...text]; // code points, as the referee counts them
  return chars.length <= MAX_ERROR ? text : `${chars.slice(0, MAX_ERROR - 1).join("")}…`;
}

/** The ActionReply for what a bot's method returned. */
function replyFor(requestId, choice) {
  const reply = { request_id: requestId };
  if (typeof choice === "string") {
    reply.action = { card: choice };
  } else if (choice && typeof choice.card === "string") {
    reply.action = { card: choice.card };
    if (choice.talk) reply.talk = String(choice.talk);
  } else if (choice && Number.isInteger(choice.tricks) && SUIT_NAMES[choice.trump]) {
    reply.action = { declare: { tricks: choice.tricks, trump: SUIT_NAMES[choice.trump] } };
  } else {
    throw new Error(`not an action: ${JSON.stringify(choice)}: return a card code or {tricks, trump}`);
  }
  return reply;
}

/**
 * The token the referee's launcher wrote on the pipe whose descriptor PYRAMID_TOKEN_FD names, read to
 * its end and closed so nothing else can read it later; else the file PYRAMID_TOKEN_FILE names (a remote
 * entrant, docs/REMOTE.md); else PYRAMID_TOKEN (a bot started by hand). When both are set, the pipe wins.
 */
function readToken() {
  const fd = process.env.PYRAMID_TOKEN_FD;
  if (fd === undefined) {
    const file = process.env.PYRAMID_TOKEN_FILE;
    if (!file) return process.env.PYRAMID_TOKEN || "";
    try {
      return fs.readFileSync(file, "ascii").trim();
    } catch (error) {
      throw new Error(`cannot read the token file PYRAMID_TOKEN_FILE=${file}: ${error.message}`);
    }
  }
  delete process.env.PYRAMID_TOKEN_FD;
  const number = Number(fd);
  try {
    const token = fs.readFileSync(number, "ascii").trim();
    fs.closeSync(number);
    return token;
  } catch (error) {
    throw new Error(`cannot read the token from PYRAMID_TOKEN_FD=${fd}: ${error.message}`);
  }
}

/**
 * TLS credentials that send no server name (SNI) when the address is an IP: RFC 6066 forbids an IP there,
 * and Node.js warns once per process when asked to send one (DEP0123, "Setting the TLS ServerName to an IP
 * address is not permitted"). grpc-js always sends the address (grpc/grpc-node#1919), so a remote bot
 * given `PYRAMID_ADDRESS=10.0.0.5:7443` printed that warning at every start. The certificate is checked
 * against the address all the same: Node.js checks the host when no server name is set. This reaches into
 * grpc-js's connector (`_createSecureConnector`, `connectionOptions`), which is why the SDK pins grpc-js's
 * version; should a later one change it, nothing breaks but the warning comes back.
 */
class NoIpServerName extends grpc.ChannelCredentials {
  constructor(inner) {
    super();
    this.inner = inner;
  }

  _isSecure() {
    return true;
  }

  _equals(other) {
    return other === this;
  }

  _createSecureConnector(channelTarget, options, callCredentials) {
    const connector = this.inner._createSecureConnector(channelTarget, options, callCredentials);
    const connection = connector.connectionOptions;
    if (connection && net.isIP(connection.servername || "")) delete connection.servername;
    return connector;
  }
}

/** TLS credentials trusting the CA certificate PYRAMID_TLS_CA names, or plaintext when it is not set. */
function channelCredentials() {
  const ca = process.env.PYRAMID_TLS_CA;
  if (!ca) return grpc.credentials.createInsecure();
  let pem;
  try {
    pem = fs.readFileSync(ca);
  } catch (error) {
    throw new Error(`cannot read the CA certificate PYRAMID_TLS_CA=${ca}: ${error.message}`);
  }
  // grpc-js would take it, and fail every handshake
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw new Error(`PYRAMID_TLS_CA=${ca} is not a PEM certificate`);
  return new NoIpServerName(grpc.credentials.createSsl(pem));
}

/** Refusals that another try cannot change (a wrong token, protocol version): a remote bot stops. */
const FINAL = new Set([grpc.status.UNAUTHENTICATED, grpc.status.FAILED_PRECONDITION, grpc.status.INVALID_ARGUMENT]);
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 30000;

/**
 * A remote bot's own keepalive: it pings the referee every third of KEEPALIVE_TIMEOUT_S and gives the
 * connection up (and reconnects) when a ping goes that long unanswered, so that a connection that went
 * silent without closing (the referee's machine gone, a NAT that forgot it) is not waited on for ever.
 * The event loop reads the answer only between the bot's decisions, so the timeout is longer than the
 * longest decision the default time control allows (21 s). PYRAMID_KEEPALIVE sets it, in seconds.
 */
const KEEPALIVE_TIMEOUT_S = 45;
const KEEPALIVE_MIN_S = 6;

/** PYRAMID_KEEPALIVE in seconds, else KEEPALIVE_TIMEOUT_S; throws for a value under KEEPALIVE_MIN_S. */
function keepaliveTimeout() {
  const text = (process.env.PYRAMID_KEEPALIVE || "").trim();
  if (!text) return KEEPALIVE_TIMEOUT_S;
  const seconds = Number(text.replace(/s$/, ""));
  if (!(seconds >= KEEPALIVE_MIN_S)) {
    throw new Error(`PYRAMID_KEEPALIVE='${text}' is not a number of seconds of at least ${KEEPALIVE_MIN_S}`);
  }
  return seconds;
}

/** grpc-js channel options for a remote connection's keepalive of `timeoutS` seconds. */
function keepaliveOptions(timeoutS) {
  return {
    "grpc.keepalive_time_ms": Math.round((timeoutS / 3) * 1000),
    "grpc.keepalive_timeout_ms": Math.round(timeoutS * 1000),
    "grpc.keepalive_permit_without_calls": 1,
  };
}

/** Milliseconds the probe of a failed connection waits to connect, or for the referee's TLS handshake. */
const PROBE_TIMEOUT_MS = 5000;
const HTTP2_PREFACE = Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);
const NOT_SIGNED = new Set([
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
]);

/** The host and port of a gRPC target, or null if it names no TCP address. */
function hostAndPort(address) {
  let rest = address.replace(/^(dns:\/\/\/|dns:|ipv4:|ipv6:)/, "");
  if (rest === address && /^(unix|unix-abstract|vsock):/.test(address)) return null;
  let host;
  let port;
  if (rest.startsWith("[")) {
    const end = rest.indexOf("]");
    host = rest.slice(1, end);
    port = rest.slice(end + 1).replace(/^:/, "");
  } else if (rest.split(":").length === 2) {
    [host, port] = rest.split(":");
  } else {
    [host, port] = [rest, ""];
  }
  port = port || "443";
  if (!host || !/^\d+$/.test(port)) return null;
  return { host, port: Number(port) };
}

/** Settles with the error of one TLS handshake with the referee: null once it succeeded. */
function handshake(host, port, options) {
  return new Promise((resolve) => {
    const socket = tls.connect({ host, port, ALPNProtocols: ["h2"], servername: net.isIP(host) ? "" : host, ...options });
    const done = (error) => {
      socket.destroy();
      resolve(error);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(new Error("timeout")));
    socket.once("secureConnect", () => done(null));
    socket.once("error", done);
  });
}

/** Whether the referee's port answers an HTTP/2 greeting in plaintext, with its SETTINGS frame. */
function speaksPlaintext(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let received = Buffer.alloc(0);
    const done = (answer) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.once("connect", () => socket.write(HTTP2_PREFACE));
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 9) done(received[3] === 4);
    });
    socket.once("error", () => done(false));
    socket.once("end", () => done(false));
  });
}

/**
 * Why no connection to `address` can work with these TLS settings (`caPath`: the file PYRAMID_TLS_CA
 * names, or undefined for plaintext), as the line a bot prints before it stops; null when the probe finds
 * nothing final (nobody listens yet, the network is down, the handshake works: trying again is right).
 * grpc-js reports all of these as UNAVAILABLE, as it does a referee that is not up yet, so the probe asks
 * the port directly: one TLS handshake (and, if that fails short of a certificate, one plaintext HTTP/2
 * greeting). The same lines as the Python SDK's (pyramid_sdk/remote.py).
 */
async function tlsRefusal(address, caPath) {
  const target = hostAndPort(address);
  if (target === null) return null;
  const { host, port } = target;
  if (!caPath) {
    const error = await handshake(host, port, { rejectUnauthorized: false });
    return error === null ? "the referee speaks TLS: set PYRAMID_TLS_CA to the organiser's CA certificate" : null;
  }
  let ca;
  try {
    ca = fs.readFileSync(caPath);
  } catch {
    return null;
  }
  const error = await handshake(host, port, { ca });
  if (error === null) return null;
  if (error.code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    const names = error.cert && error.cert.subjectaltname;
    return `the referee's certificate is not for ${host}${names ? ` (it names ${names})` : ""}: set PYRAMID_ADDRESS to a name it was issued for`;
  }
  if (error.code === "CERT_HAS_EXPIRED" || error.code === "CERT_NOT_YET_VALID") {
    return `the referee's certificate does not verify: ${error.message}`;
  }
  if (NOT_SIGNED.has(error.code)) return `the referee's certificate is not signed by PYRAMID_TLS_CA=${caPath}`;
  if (error.code !== "ECONNREFUSED" && (await speaksPlaintext(host, port))) {
    return `the referee at ${host}:${port} does not speak TLS: unset PYRAMID_TLS_CA to connect in plaintext (its token then crosses the network unencrypted)`;
  }
  return null;
}

/**
 * gRPC's own log stays out of the bot's output (the SDK reports every end of a stream in its own words),
 * unless the user asked for it: GRPC_NODE_VERBOSITY, GRPC_VERBOSITY, GRPC_NODE_TRACE or GRPC_TRACE set.
 */
function quietGrpc() {
  const asked = ["GRPC_NODE_VERBOSITY", "GRPC_VERBOSITY", "GRPC_NODE_TRACE", "GRPC_TRACE"];
  if (!asked.some((name) => process.env[name] !== undefined)) grpc.setLogVerbosity(grpc.logVerbosity.NONE);
}

const MAX_ASKED = 1024;

/**
 * How many matches at once a remote bot asks for: `given` (run's `maxMatches`), else `text`
 * (PYRAMID_MAX_MATCHES), else 1; throws saying what to set for anything but a whole number from 1 to 1024.
 */
function matchesAsked(given, text) {
  if (given === undefined && !(text || "").trim()) return 1;
  const shown = given !== undefined ? `maxMatches=${given}` : `PYRAMID_MAX_MATCHES='${(text || "").trim()}'`;
  const asked = given !== undefined ? given : Number((text || "").trim());
  if (!Number.isInteger(asked) || asked < 1 || asked > MAX_ASKED) {
    throw new Error(`${shown} is not a whole number of matches from 1 to ${MAX_ASKED}`);
  }
  return asked;
}

/**
 * A bot for one more stream of several matches at once: `bot.clone()` if the bot has one, else an object
 * of the same class with a structured clone of each of its own fields (a field that cannot be cloned, a
 * function or a handle, is shared), so that what a bot keeps on `this` for a match never mixes with
 * another match's.
 */
function copyBot(bot) {
  if (typeof bot.clone === "function") return bot.clone();
  const copy = Object.create(Object.getPrototypeOf(bot));
  for (const [key, value] of Object.entries(bot)) {
    try {
      copy[key] = structuredClone(value);
    } catch {
      copy[key] = value;
    }
  }
  return copy;
}

/**
 * Plays every match the referee asks for; resolves when the referee ends the stream, with OK (done with
 * this bot) or CANCELLED (the referee was interrupted: a line on stderr says so).
 * The address defaults to PYRAMID_ADDRESS, the token to what the launcher passed on PYRAMID_TOKEN_FD.
 * A refusal (wrong token, protocol version) rejects with the referee's status and message.
 *
 * With PYRAMID_TOKEN_FILE (and no launcher's pipe) the bot is a remote entrant (docs/REMOTE.md): over TLS
 * when PYRAMID_TLS_CA names the CA's certificate, it reconnects with backoff after a drop or while the
 * referee is away, and resolves when the league is over (the referee ends the stream with OK). A remote
 * bot may ask for several matches at once (`maxMatches`, else PYRAMID_MAX_MATCHES): once the referee's
 * welcome grants N, it plays on N streams, each with its own copy of the bot (`copyBot`), each answering
 * its own pings and reconnecting on its own (docs/PROTOCOL.md, "Several matches at once"). The streams
 * share the event loop: a bot's decisions overlap only where they await something.
 */
function run(bot, { address = process.env.PYRAMID_ADDRESS, token, maxMatches } = {}) {
  if (!address) {
    return Promise.reject(new Error(`${bot.name}: no referee address: set PYRAMID_ADDRESS`));
  }
  quietGrpc();
  const remote = Boolean(process.env.PYRAMID_TOKEN_FILE) && process.env.PYRAMID_TOKEN_FD === undefined;
  let credentials;
  let options = {};
  let asked = 1;
  try {
    if (token === undefined) token = readToken();
    credentials = channelCredentials();
    if (remote) {
      options = keepaliveOptions(keepaliveTimeout());
      asked = matchesAsked(maxMatches, process.env.PYRAMID_MAX_MATCHES);
    }
  } catch (error) {
    return Promise.reject(new Error(`${bot.name}: ${error.message}`));
  }
  if (!remote) return connect(bot, address, token, credentials, false);
  const lanes = [];
  const grow = (granted) => {
    while (lanes.length < granted - 1) {
      const label = `${bot.name} [${lanes.length + 2}]`;
      const lane = serveRemote(copyBot(bot), label, address, token, credentials, options, asked);
      lanes.push(lane.catch((error) => console.error(`${label}: ${error.message}`)));
    }
  };
  return serveRemote(bot, bot.name, address, token, credentials, options, asked, grow).then(
    async () => {
      await Promise.all(lanes); // the referee ends every stream with the league
    },
  );
}

/**
 * One remote stream's loop: connects, plays, and reconnects with backoff after any end but the league's
 * (OK) and a final refusal. `onWelcome` is told each welcome's grant (the first stream starts the others).
 */
function serveRemote(bot, label, address, token, credentials, options, asked, onWelcome) {
  return (async () => {
    let delay = BACKOFF_FIRST_MS;
    for (;;) {
      const attempt = { welcomed: false, asked, onWelcome };
      try {
        await connect(bot, address, token, credentials, true, attempt, options);
        console.error(`${label}: the referee ended the stream: the league is over`);
        return;
      } catch (error) {
        // Every end but the league's and a final refusal goes round again: a drop, a cut, a GOAWAY, a
        // keepalive timeout, an absent referee, and whatever else ended this connection.
        if (FINAL.has(error.code)) throw error;
        if (attempt.welcomed) delay = BACKOFF_FIRST_MS;
        else if (error.code === grpc.status.UNAVAILABLE) {
          const refusal = await tlsRefusal(address, process.env.PYRAMID_TLS_CA);
          if (refusal) throw new Error(`${bot.name}: ${refusal}`);
        }
        const wait = delay * (0.8 + 0.4 * Math.random());
        const why = label === bot.name ? error.message : `${label}: ${error.message.replace(`${bot.name}: `, "")}`;
        console.error(`${why}; reconnecting in ${(wait / 1000).toFixed(1)}s`);
        await new Promise((resolve) => setTimeout(resolve, wait));
        delay = Math.min(delay * 2, BACKOFF_MAX_MS);
      }
    }
  })();
}

/**
 * One stream to the referee; `remote`: every abnormal end rejects, with the status in `error.code`.
 * Messages are handled one after another, in order, each after the bot's answer to the one before: so a
 * Ping is answered between the bot's decisions, never while its code is still thinking (the referee asks
 * for a Pong to see that the bot itself is there, not only its connection).
 */
function connect(bot, address, token, credentials, remote, attempt = {}, options = {}) {
  const { RefereeService } = protocol();
  const client = new RefereeService(address, credentials, options);
  const call = client.Connect();
  const matches = new Map();
  let queue = Promise.resolve();
  let failure = null;

  const hook = async (fn, arg) => {
    try {
      await fn.call(bot, arg);
    } catch (error) {
      console.error(error);
    }
  };

  const deliverDealEnd = async (matchId, message) => {
    if (message.last_deal && matches.has(matchId)) {
      await hook(bot.dealEnd, observationFromWire(message.last_deal, matches.get(matchId)));
    }
  };

  const handle = async (message, receivedAt) => {
    switch (message.kind) {
      case "match_start": {
        const start = message.match_start;
        const rules = rulesFromWire(start.rules);
        matches.set(start.match_id, rules);
        takeDebug(bot); // an earlier match's lines belong to no decision of this one
        await hook(bot.matchStart, {
          matchId: start.match_id,
          seat: start.seat,
          seatNames: start.seat_names,
          rules,
          timeControl: { perActionMs: start.time_control.per_action_ms, bankMs: start.time_control.bank_ms },
          seed: start.seed,
        });
        break;
      }
      case "action_request": {
        const request = message.action_request;
        await deliverDealEnd(request.match_id, request);
        let reply = { request_id: request.request_id };
        try {
          const obs = observationFromWire(request.observation, matches.get(request.match_id), request.legal_actions);
          obs.clock = clockFromWire(request, receivedAt);
          const choice = await (obs.phase === "declare" ? bot.declare(obs) : bot.play(obs));
          reply = replyFor(request.request_id, choice);
        } catch (error) {
          // A bug in the bot: an action-less reply is a fault at once, where silence would cost the time
          // limit, and it says what happened.
          console.error(error);
          reply = { request_id: request.request_id, error: errorLine(error) };
        }
        const debug = takeDebug(bot);
        if (debug) reply.debug = debug;
        call.write({ action: reply });
        break;
      }
      case "match_end": {
        const end = message.match_end;
        await deliverDealEnd(end.match_id, end);
        matches.delete(end.match_id);
        await hook(bot.matchEnd, {
          matchId: end.match_id,
          totals: end.totals,
          ranks: end.ranks,
          faults: end.faults.map((f) => `${f.kind}: ${f.detail}`),
          forfeited: end.forfeited,
        });
        takeDebug(bot); // no answer of this match follows to carry them
        break;
      }
      case "notice":
        console.error(`${bot.name}: referee says: ${message.notice.text}`);
        break;
      case "welcome": // how many matches at once the referee granted: the first stream opens the others
        if (attempt.onWelcome) attempt.onWelcome(Math.max(1, message.welcome.max_matches || 1));
        break;
      case "ping": // the referee's check that the bot itself is there: answered in turn, between decisions
        call.write({ pong: { nonce: message.ping.nonce } });
        break;
      default:
        break;
    }
  };

  return new Promise((resolve, reject) => {
    call.on("data", (message) => {
      attempt.welcomed = true;
      const receivedAt = performance.now(); // the referee's clock runs from before the queue
      queue = queue
        .then(() => handle(message, receivedAt))
        .catch((error) => {
          // A message the SDK could not take (not the bot's own error: its hooks' are caught): this
          // stream is over, and a remote bot connects again.
          if (failure === null) failure = error;
          call.cancel();
        });
    });
    call.on("end", () => {
      queue.then(() => {
        client.close();
        resolve();
      });
    });
    call.on("error", (error) => {
      client.close();
      if (failure !== null) {
        reject(new Error(`${bot.name}: ${failure.message}`));
      } else if (remote) {
        const failure = new Error(`${bot.name}: ${grpc.status[error.code] || error.code}: ${error.details || error.message}`);
        failure.code = error.code;
        reject(failure);
      } else if (error.code === grpc.status.CANCELLED) {
        // The referee was interrupted: not this bot's failure, so run resolves (main exits with code 0).
        console.error(`${bot.name}: the referee cancelled the stream: ${error.details || error.message}`);
        resolve();
      } else reject(new Error(`${bot.name}: ${grpc.status[error.code] || error.code}: ${error.details || error.message}`));
    });
    const hello = { protocol_version: PROTOCOL_VERSION, token, bot_name: bot.name, bot_version: bot.version };
    if ((attempt.asked || 1) > 1) hello.max_matches = attempt.asked; // one at a time: the hello as before
    call.write({ hello });
  });
}

/** `run(bot)` for a bot's main module: exits with a one-line message if the referee refuses it. */
function main(bot) {
  if (process.env.PYRAMID_TOKEN_FILE && process.env.PYRAMID_TOKEN_FD === undefined) {
    process.on("SIGINT", () => {
      console.error(`${bot.name}: stopped (Ctrl-C)`);
      process.exit(0);
    });
  }
  run(bot).then(
    () => process.exit(0),
    (error) => {
      console.error(error.message);
      process.exit(1);
    },
  );
}

module.exports = {
  Bot,
  run,
  main,
  rank,
  suit,
  RANKS,
  SUITS,
  observationFromWire,
  clockFromWire,
  replyFor,
  errorLine,
  takeDebug,
  MAX_DEBUG_BYTES,
  MAX_DEBUG_PER_MATCH,
  matchesAsked,
  copyBot,
  protocol,
  PROTOCOL_VERSION,
  PROTO_ROOT,
};
