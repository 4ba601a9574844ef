"use strict";
// The SDK against a stand-in referee on loopback: real grpc-js on both ends, the real .proto file.
const test = require("node:test");
const assert = require("node:assert/strict");
const grpc = require("@grpc/grpc-js");
const { Bot, run, rank, suit, protocol, replyFor, errorLine, observationFromWire, matchesAsked, copyBot } = require("..");
const { takeDebug, MAX_DEBUG_BYTES } = require("..");

const OBSERVATION = {
  seat: 1,
  phase: "PHASE_PLAY",
  deal_number: 3,
  dealer: 3,
  declarer: 0,
  to_act: 1,
  hand: ["9S", "KH", "AD"],
  declaration: { tricks: 2, trump: "SUIT_HEARTS" },
  current_trick: { leader: 0, cards: ["QS"] },
  tricks: [
    { leader: 0, cards: ["AS", "TS"], winner: 0 },
    { leader: 0, cards: ["JS", "AH"], winner: 1 },
  ],
  taken: [1, 1],
  pyramids: [{ entries: [{ declared: 3, taken: 3, points: 10 }], remaining: [1, 2, 3, 3, 3, 2, 1], total: 10 }],
  talk: [{ seat: 1, trick: 1, text: "hi" }],
  forfeited: [false, false],
};
const LEGAL = ["9S", "KH", "AD"].map((card) => ({ card }));

/** A one-connection referee that sends `script` after the hello and collects what the bot answers. */
async function referee(script) {
  const server = new grpc.Server();
  const received = [];
  server.addService(protocol().RefereeService.service, {
    Connect(call) {
      call.on("data", (message) => {
        received.push(message);
        if (message.hello) {
          for (const item of script) call.write(item);
        } else if (received.length === script.filter((m) => m.action_request).length + 1) {
          call.end();
        }
      });
    },
  });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, received, stop: () => server.forceShutdown() };
}

const START = {
  match_start: {
    match_id: "m1",
    seat: 1,
    seat_names: ["a", "b"],
    rules: { players: 2, trick_winner: "TRICK_WINNER_LED_SUIT", talk: "TALK_MODE_OPEN", talk_max_length: 80, talk_max_per_trick: 2 },
    time_control: { per_action_ms: 1000, bank_ms: 20000 },
    seed: "42",
  },
};
const request = (id, extra = {}) => ({
  action_request: { request_id: String(id), match_id: "m1", observation: OBSERVATION, legal_actions: LEGAL, ...extra },
});

test("card helpers", () => {
  assert.equal(rank("9S"), 0);
  assert.equal(rank("AH"), 5);
  assert.equal(suit("QD"), "D");
});

test("observations are friendly: codes, letters, helpers", () => {
  const obs = observationFromWire(OBSERVATION, { players: 2, trickWinner: "led-suit" }, LEGAL);
  assert.equal(obs.phase, "play");
  assert.deepEqual(obs.legalCards, ["9S", "KH", "AD"]);
  assert.equal(obs.trump, "H");
  assert.equal(obs.declared, 2);
  assert.equal(obs.myTurn, true);
  assert.equal(obs.isDeclarer, false);
  assert.deepEqual(obs.currentTrick, { leader: 0, cards: ["QS"], winner: null });
  assert.equal(obs.tricks[1].winner, 1);
  assert.equal(obs.unseenCards.length, 24 - 3 - 5);
  assert.ok(!obs.unseenCards.includes("QS"));
});

test("replies: a card, a card with talk, a declaration; anything else throws", () => {
  assert.deepEqual(replyFor("7", "QS"), { request_id: "7", action: { card: "QS" } });
  assert.deepEqual(replyFor("7", { card: "QS", talk: "low" }), { request_id: "7", action: { card: "QS" }, talk: "low" });
  assert.deepEqual(replyFor("7", { tricks: 3, trump: "C" }), {
    request_id: "7",
    action: { declare: { tricks: 3, trump: "SUIT_CLUBS" } },
  });
  assert.throws(() => replyFor("7", 42), /not an action/);
});

test("a bot plays through a stand-in referee, sync and async answers alike", async () => {
  const ref = await referee([
    START,
    request(1, { per_action_ms: 250, bank_ms: 1500 }),
    request(2, { last_deal: OBSERVATION, per_action_ms: 250, bank_ms: 900 }),
    { match_end: { match_id: "m1", totals: [1, 2], ranks: [2, 1], faults: [] } },
  ]);
  const events = [];
  const clocks = [];
  class Slow extends Bot {
    matchStart(info) {
      events.push(`start seed=${info.seed} seat=${info.seat}`);
    }
    play(obs) {
      clocks.push({ ...obs.clock, now: performance.now() });
      return obs.dealNumber === 3 && events.length === 1
        ? "KH"
        : new Promise((resolve) => setTimeout(() => resolve({ card: "AD", talk: "mine" }), 20));
    }
    dealEnd(obs) {
      events.push(`deal ${obs.dealNumber} over`);
    }
    matchEnd(result) {
      events.push(`end ranks=${result.ranks}`);
    }
  }
  const bot = new Slow();
  bot.name = "slow";
  await run(bot, { address: ref.address, token: "t" });
  ref.stop();
  assert.equal(ref.received[0].hello.token, "t");
  assert.equal(ref.received[0].hello.protocol_version, 1);
  assert.equal(ref.received[0].hello.bot_name, "slow");
  assert.equal(ref.received[1].action.action.card, "KH");
  assert.equal(ref.received[2].action.action.card, "AD");
  assert.equal(ref.received[2].action.talk, "mine");
  assert.equal(ref.received[2].action.request_id, "2");
  assert.deepEqual(events, ["start seed=42 seat=1", "deal 3 over", "end ranks=2,1"]);
  // Every decision carries its clock: the request's limits, and a deadline on this process's clock.
  assert.deepEqual(
    clocks.map((c) => [c.perActionMs, c.bankMs, c.timeLeftMs, Math.round(c.deadline - c.receivedAt)]),
    [
      [250, 1500, 1750, 1750],
      [250, 900, 1150, 1150],
    ],
  );
  for (const c of clocks) assert.ok(c.receivedAt <= c.now && c.now < c.deadline);
});

test("a bot that throws answers at once with no action, and keeps playing", async () => {
  const ref = await referee([START, request(1), request(2)]);
  class Flaky extends Bot {
    constructor() {
      super();
      this.calls = 0;
    }
    play() {
      this.calls += 1;
      if (this.calls === 1) throw new Error("bug in play");
      return "9S";
    }
  }
  const errors = [];
  const original = console.error;
  console.error = (error) => errors.push(String(error));
  try {
    await run(new Flaky(), { address: ref.address, token: "t" });
  } finally {
    console.error = original;
    ref.stop();
  }
  assert.equal(ref.received[1].action.action, null);
  assert.equal(ref.received[1].action.error, "Error: bug in play"); // the fault reads "the bot raised Error: bug in play"
  assert.equal(ref.received[2].action.action.card, "9S");
  assert.equal(ref.received[2].action.error, "");
  assert.match(errors.join("\n"), /bug in play/);
});

test("what a bot threw travels as one line of at most 200 characters", () => {
  assert.equal(errorLine(new TypeError("x is not a function")), "TypeError: x is not a function");
  assert.equal(errorLine(new RangeError("")), "RangeError");
  assert.equal(errorLine(new Error("first\n  second\r\n")), "Error: first | second");
  assert.equal(errorLine("a string"), "thrown: a string");
  assert.equal(errorLine(undefined), "thrown: undefined");
  const long = errorLine(new Error("😀".repeat(500)));
  assert.equal([...long].length, 200); // code points, as the referee counts them
  assert.ok(long.endsWith("…"));
});

test("a bot's debug lines go with its next answer, once, and never over the referee's cap", () => {
  const bot = new Bot();
  assert.equal(takeDebug(bot), "");
  bot.debug("eval 0.4");
  bot.debug(7);
  assert.equal(takeDebug(bot), "eval 0.4\n7");
  assert.equal(takeDebug(bot), ""); // taken: the next answer carries none
  const lines = [];
  const saved = console.error;
  console.error = (line) => lines.push(line);
  try {
    bot.debug("é".repeat(MAX_DEBUG_BYTES / 2)); // 1024 bytes of UTF-8: kept
    assert.equal(takeDebug(bot).length, MAX_DEBUG_BYTES / 2);
    bot.debug("é".repeat(MAX_DEBUG_BYTES / 2 + 1)); // 1026 bytes: not sent
    assert.equal(takeDebug(bot), "");
  } finally {
    console.error = saved;
  }
  assert.deepEqual(lines, ["node-bot: debug text of 1026 bytes not sent: the referee keeps at most 1024 bytes per answer"]);
});

/** A referee that ends every stream with `code` and `details` as soon as the bot says hello. */
async function endingReferee(code, details) {
  const server = new grpc.Server();
  server.addService(protocol().RefereeService.service, {
    Connect(call) {
      call.on("data", () => call.emit("error", { code, details }));
    },
  });
  const port = await new Promise((resolve) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (_, p) => resolve(p)),
  );
  return { address: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

test("a stream the referee cancels resolves run, with a line on stderr", async () => {
  const ref = await endingReferee(grpc.status.CANCELLED, "the referee was interrupted");
  const lines = [];
  const original = console.error;
  console.error = (line) => lines.push(String(line));
  try {
    await run(new Bot(), { address: ref.address, token: "x" }); // resolves: main would exit 0
  } finally {
    console.error = original;
    ref.stop();
  }
  assert.deepEqual(lines, ["node-bot: the referee cancelled the stream: the referee was interrupted"]);
});

test("a refusal rejects with the status and the referee's message", async () => {
  const ref = await endingReferee(grpc.status.UNAUTHENTICATED, "unknown token");
  await assert.rejects(run(new Bot(), { address: ref.address, token: "x" }), /UNAUTHENTICATED: unknown token/);
  ref.stop();
  await assert.rejects(run(new Bot(), { address: "" }), /no referee address/);
});

test("the token comes from the pipe PYRAMID_TOKEN_FD names, never from the environment", async () => {
  const { spawn } = require("node:child_process");
  const ref = await referee([]);
  const child = spawn(
    process.execPath,
    ["-e", `require(${JSON.stringify(require.resolve(".."))}).main(new (require(${JSON.stringify(require.resolve(".."))}).Bot)())`],
    {
      env: { PATH: process.env.PATH, PYRAMID_ADDRESS: ref.address, PYRAMID_TOKEN_FD: "3", PYRAMID_TOKEN: "not-this" },
      stdio: ["ignore", "inherit", "inherit", "pipe"],
    },
  );
  child.stdio[3].end("secret-from-the-pipe\n");
  const deadline = Date.now() + 10000;
  while (ref.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  child.kill();
  ref.stop();
  assert.equal(ref.received[0].hello.token, "secret-from-the-pipe");
});

test("how many matches at once a remote bot asks for, and the copies of the bot its streams play with", () => {
  assert.equal(matchesAsked(undefined, undefined), 1);
  assert.equal(matchesAsked(undefined, " 4 "), 4);
  assert.equal(matchesAsked(3, "8"), 3); // run's option wins over the environment
  for (const bad of ["lots", "0", "1.5", "2000"]) {
    assert.throws(() => matchesAsked(undefined, bad), /PYRAMID_MAX_MATCHES='.*' is not a whole number of matches from 1 to 1024/);
  }
  assert.throws(() => matchesAsked(0), /maxMatches=0 is not a whole number/);
  class Counting extends Bot {
    constructor() {
      super();
      this.seen = { deals: [1, 2] };
      this.say = () => "shared";
    }
  }
  const bot = new Counting();
  const copy = copyBot(bot);
  assert.ok(copy instanceof Counting);
  assert.deepEqual(copy.seen, bot.seen);
  copy.seen.deals.push(3); // what one stream's bot keeps never reaches another's
  assert.deepEqual(bot.seen.deals, [1, 2]);
  assert.equal(copy.say, bot.say); // a function cannot be cloned: it is shared
  const own = { clone: () => "its own copy" };
  assert.equal(copyBot(own), "its own copy");
});
