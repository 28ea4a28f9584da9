/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * <redlock/redlock.hpp> against real masters: a plain program (the fleet
 * is C, its header extern "C"), one scenario per run, as ctest runs it
 * (test_cpp SCENARIO). Exits 0 when every check held, 1 otherwise, each
 * failed check printed with its line.
 */
#include <redlock/redlock.hpp>

#include "fleet.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace {

int failures = 0;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                                 \
        }                                                                               \
    } while (0)

using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;

milliseconds scaled(long long ms)
{
    return milliseconds(fleet_scaled_ms(ms));
}

/* Three masters and a config for them, freed on scope exit. */
class masters {
public:
    masters() = default;
    masters(const masters &) = delete;
    masters &operator=(const masters &) = delete;
    ~masters()
    {
        redlock_config_free(cfg_);
        fleet_stop(f_);
    }
    bool ok() const { return cfg_ != nullptr; }
    fleet *f() const { return f_; }
    const redlock_config &cfg() const { return *cfg_; }
    /* On how many masters resource holds value. */
    size_t holding(const std::string &resource, const std::string &value) const
    {
        return fleet_count_value(f_, resource.data(), resource.size(), value.data(), value.size());
    }
    /* On how many masters resource exists at all. */
    size_t present(const std::string &resource) const
    {
        size_t n = 0;
        for (size_t i = 0; i < fleet_size(f_); i++)
            if (fleet_pttl(f_, i, resource.data(), resource.size()) != -2)
                n++;
        return n;
    }

    /* Whether resource is gone from every master within a bounded wait: a
     * release decided on a quorum may still be on its way to the last
     * master, or owed to one whose connection a busy machine slowed. */
    bool gone(const std::string &resource) const
    {
        const auto end = steady::now() + scaled(3000);
        while (present(resource) != 0) {
            if (steady::now() >= end)
                return false;
            std::this_thread::sleep_for(milliseconds(10));
        }
        return true;
    }

private:
    fleet *f_ = fleet_start(3, nullptr);
    redlock_config *cfg_ = f_ != nullptr ? fleet_config(f_) : nullptr;
};

/* Wait (bounded) until pred holds. */
bool eventually(milliseconds bound, const std::function<bool()> &pred)
{
    auto until = steady::now() + bound;
    while (!pred()) {
        if (steady::now() > until)
            return false;
        std::this_thread::sleep_for(milliseconds(10));
    }
    return true;
}

/* ttl_ms stretched by the time scale (a slow tool's client needs it). */
redlock_acquire_options ttl_opts(long long ttl_ms)
{
    redlock_acquire_options o;
    redlock_acquire_options_init(&o);
    o.ttl_ms = ttl_ms == REDLOCK_DEFAULT ? ttl_ms : fleet_scaled_ms(ttl_ms);
    return o;
}

void guard_scope(const masters &m)
{
    redlock::client c(m.cfg());
    {
        redlock::guard g = c.acquire("cpp:guard");
        CHECK(g.owns_lock());
        std::string value = g.value();
        CHECK(value.size() >= REDLOCK_VALUE_LEN);
        /* A quorum: a master whose handshake a busy machine (TSan beside
         * other work) slowed past the connect timeout missed the SET. */
        CHECK(m.holding("cpp:guard", value) >= 2);
        CHECK(g.validity() > milliseconds(0));
        CHECK(g.fencing_token() == 0);
        CHECK(g.state() == REDLOCK_LOCK_HELD);
    }
    CHECK(m.gone("cpp:guard"));
    /* An explicit release leaves the guard empty. */
    redlock::guard g = c.acquire("cpp:guard");
    g.release();
    CHECK(!g.owns_lock());
    CHECK(m.gone("cpp:guard"));
}

void contention(const masters &m)
{
    redlock::client a(m.cfg());
    redlock::client b(m.cfg());
    redlock::mutex ma(a, "cpp:contended");
    redlock::mutex mb(b, "cpp:contended");
    ma.lock();
    CHECK(!mb.try_lock());
    CHECK(!mb.owns_lock());
    /* Released by another thread after a while: try_lock_for waits. */
    std::thread releaser([&] {
        std::this_thread::sleep_for(milliseconds(300));
        ma.unlock();
    });
    auto start = steady::now();
    CHECK(mb.try_lock_for(scaled(5000)));
    CHECK(steady::now() - start >= milliseconds(250));
    releaser.join();
    CHECK(!ma.last_unlock_error());
    CHECK(mb.owns_lock());
    CHECK(m.holding("cpp:contended", mb.held().value()) >= 2);
    /* Held: a short try_lock_for gives up, no sooner than asked. */
    start = steady::now();
    CHECK(!ma.try_lock_for(milliseconds(200)));
    CHECK(steady::now() - start >= milliseconds(150));
    mb.unlock();
    CHECK(m.gone("cpp:contended"));
}

void unique_lock(const masters &m)
{
    redlock::client c(m.cfg());
    redlock::mutex mx(c, "cpp:unique", milliseconds(5000));
    // cppcheck-suppress localMutex ; a distributed lock: others see it
    std::unique_lock<redlock::mutex> l(mx, std::defer_lock);
    CHECK(!l.owns_lock());
    CHECK(m.gone("cpp:unique"));
    CHECK(l.try_lock_for(scaled(2000)));
    CHECK(l.owns_lock());
    CHECK(m.holding("cpp:unique", mx.held().value()) >= 2);
    long long pttl = fleet_pttl(m.f(), 0, "cpp:unique", 10);
    CHECK(pttl > 3000 && pttl <= 5000); /* the mutex's TTL, not the config's */
    l.unlock();
    CHECK(m.gone("cpp:unique"));
    CHECK(l.try_lock_until(steady::now() + scaled(2000)));
    {
        std::unique_lock<redlock::mutex> moved(std::move(l));
        CHECK(moved.owns_lock());
    }
    CHECK(m.gone("cpp:unique"));
    /* Any duration, "forever" included, and none. */
    CHECK(mx.try_lock_for(std::chrono::hours::max()));
    mx.unlock();
    CHECK(mx.try_lock_for(std::chrono::seconds(-1)));
    mx.unlock();
    CHECK(m.gone("cpp:unique"));
    /* Held elsewhere: std::try_to_lock does not own. */
    redlock::client other(m.cfg());
    redlock::guard g = other.acquire("cpp:unique");
    std::unique_lock<redlock::mutex> t(mx, std::try_to_lock);
    CHECK(!t.owns_lock());
}

void scoped_lock(const masters &m)
{
    redlock::client c(m.cfg());
    redlock::mutex mx(c, "cpp:scoped");
    {
        std::scoped_lock s(mx);
        CHECK(mx.owns_lock());
        CHECK(m.holding("cpp:scoped", mx.held().value()) >= 2);
    }
    CHECK(m.gone("cpp:scoped"));
    {
        std::lock_guard<redlock::mutex> s(mx);
        CHECK(m.present("cpp:scoped") >= 2);
    }
    CHECK(m.gone("cpp:scoped"));
    /* Locking a held mutex again is an error, not a deadlock. */
    mx.lock();
    bool threw = false;
    try {
        mx.lock();
    } catch (const std::system_error &e) {
        threw = e.code() == redlock::errc::busy;
    }
    CHECK(threw);
    mx.unlock();
}

void extend(const masters &m)
{
    redlock::client c(m.cfg());
    redlock_acquire_options o = ttl_opts(1000);
    redlock::guard g = c.acquire("cpp:extend", &o);
    std::this_thread::sleep_for(milliseconds(200));
    g.extend(scaled(4000));
    CHECK(g.validity() > scaled(3000));
    CHECK(fleet_pttl(m.f(), 0, "cpp:extend", 10) > fleet_scaled_ms(3000));
    /* The keys gone: extend says so, in both forms. */
    for (size_t i = 0; i < 3; i++)
        fleet_del(m.f(), i, "cpp:extend", 10);
    bool threw = false;
    try {
        g.extend(); /* its own TTL */
    } catch (const std::system_error &e) {
        threw = e.code() == redlock::errc::not_owner;
    }
    CHECK(threw);
    CHECK(g.validity() <= milliseconds(0));
    /* Known lost now: no validity left to extend. */
    std::error_code ec;
    g.extend(milliseconds(1000), ec);
    CHECK(ec == redlock::errc::expired);
}

void auto_extend(const masters &m)
{
    redlock::client c(m.cfg());
    redlock_acquire_options o = ttl_opts(500);
    redlock::guard g = c.acquire("cpp:auto", &o);
    std::atomic<int> lost_calls{0};
    g.auto_extend([&](std::error_code) { lost_calls++; });
    std::this_thread::sleep_for(scaled(1500)); /* three TTLs */
    CHECK(g.state() == REDLOCK_LOCK_HELD);
    CHECK(m.holding("cpp:auto", g.value()) >= 2);
    CHECK(g.validity() > milliseconds(0));
    CHECK(lost_calls == 0);
    g.release();
    CHECK(m.gone("cpp:auto"));
}

void lost(const masters &m)
{
    redlock::client c(m.cfg());
    redlock_acquire_options o = ttl_opts(600);
    redlock::guard g = c.acquire("cpp:lost", &o);
    std::atomic<int> calls{0};
    std::atomic<int> status{0};
    std::atomic<bool> category_ok{false};
    g.auto_extend([&](std::error_code ec) {
        category_ok = ec.category() == redlock::category();
        status = ec.value();
        calls++;
    });
    /* A majority stopped: no extension can succeed. */
    CHECK(fleet_pause(m.f(), 0) == 0);
    CHECK(fleet_pause(m.f(), 1) == 0);
    CHECK(eventually(scaled(5000), [&] { return calls.load() > 0; }));
    CHECK(calls == 1);
    CHECK(category_ok);
    CHECK(status != REDLOCK_OK);
    CHECK(g.state() == REDLOCK_LOCK_LOST);
    /* lock() on a mutex: no quorum is no contention, so it throws. */
    redlock::mutex mx(c, "cpp:lost:other");
    bool threw = false;
    try {
        mx.lock();
    } catch (const std::system_error &e) {
        threw = e.code().category() == redlock::category() && e.code() != redlock::errc::conflict;
    }
    CHECK(threw);
    CHECK(!mx.owns_lock());
    fleet_resume(m.f(), 0);
    fleet_resume(m.f(), 1);
}

void errors(const masters &m)
{
    /* Every status: its message and name are the C library's. */
#define CHECK_STATUS_(name, value, msg)                                              \
    {                                                                                \
        std::error_code ec = redlock::make_error_code(value);                        \
        CHECK(ec.message() == redlock_strerror(value));                              \
        CHECK(std::strcmp(redlock::status_name(ec), "REDLOCK_" #name) == 0);         \
        CHECK(redlock::make_error_code(static_cast<redlock::errc>(value)) == ec);    \
    }
    REDLOCK_STATUS_MAP(CHECK_STATUS_)
#undef CHECK_STATUS_
    CHECK(std::string(redlock::category().name()) == "redlock");
    std::error_code ok = redlock::errc::ok;
    CHECK(!ok);
    std::error_code conflict = redlock::errc::conflict;
    CHECK(conflict.value() == REDLOCK_ECONFLICT);
    CHECK(conflict.message() == "the resource is held by another holder");
    CHECK(std::error_code(redlock::errc::invalid_argument) == std::errc::invalid_argument);
    CHECK(std::error_code(redlock::errc::conflict) != std::errc::invalid_argument);
    CHECK(std::strcmp(redlock::status_name(std::make_error_code(std::errc::io_error)),
                      "REDLOCK_UNKNOWN") == 0);

    /* A config file that is not there: both forms. */
    std::error_code ec;
    redlock::client none = redlock::client::from_file("/nonexistent/redlock.yaml", ec);
    CHECK(ec == redlock::errc::config);
    CHECK(!none);
    bool threw = false;
    try {
        redlock::client::from_file("/nonexistent/redlock.yaml");
    } catch (const std::system_error &e) {
        threw = e.code() == redlock::errc::config &&
                std::strstr(e.what(), "/nonexistent/redlock.yaml") != nullptr;
    }
    CHECK(threw);

    /* Contention as an error_code, and a TTL over max_ttl_ms thrown. */
    redlock::client c(m.cfg());
    redlock::guard held = c.acquire("cpp:errors");
    redlock_acquire_options once = ttl_opts(REDLOCK_DEFAULT);
    once.retry_count = 0;
    redlock::guard second = c.acquire("cpp:errors", ec, &once);
    CHECK(ec == redlock::errc::conflict);
    CHECK(!second);
    /* A TTL no attempt could get validity from: refused, nothing sent. */
    redlock::mutex too_short(c, "cpp:errors:ttl", milliseconds(1));
    threw = false;
    try {
        too_short.try_lock();
    } catch (const std::system_error &e) {
        threw = e.code() == redlock::errc::invalid_argument &&
                e.code() == std::errc::invalid_argument;
    }
    CHECK(threw);
    CHECK(m.gone("cpp:errors:ttl"));
    /* An empty guard's calls fail cleanly. */
    redlock::guard empty;
    empty.extend(milliseconds(1000), ec);
    CHECK(ec == redlock::errc::invalid_argument);
    empty.release(ec);
    CHECK(!ec);
}

void moves(const masters &m)
{
    redlock::client c0(m.cfg());
    redlock::client c(std::move(c0));
    // cppcheck-suppress accessMoved
    CHECK(!c0); // NOLINT(bugprone-use-after-move): what a move leaves
    CHECK(c);
    redlock::guard a = c.acquire("cpp:move:a");
    std::string value = a.value();
    redlock::guard b(std::move(a));
    CHECK(!a.owns_lock()); // NOLINT(bugprone-use-after-move,clang-analyzer-cplusplus.Move)
    CHECK(b.owns_lock());
    CHECK(b.value() == value);
    CHECK(m.holding("cpp:move:a", value) >= 2); /* a's scope does not release it */
    /* Moving over a held guard releases what it held. */
    redlock::guard d = c.acquire("cpp:move:d");
    d = std::move(b);
    CHECK(m.gone("cpp:move:d"));
    CHECK(m.holding("cpp:move:a", value) >= 2);
    d.release();
    CHECK(m.gone("cpp:move:a"));
    /* An auto-extended guard moved keeps its handler. */
    redlock_acquire_options o = ttl_opts(500);
    redlock::guard e = c.acquire("cpp:move:e", &o);
    std::atomic<int> lost_calls{0};
    e.auto_extend([&](std::error_code) { lost_calls++; });
    redlock::guard f(std::move(e));
    std::this_thread::sleep_for(scaled(1000)); /* two TTLs */
    CHECK(f.state() == REDLOCK_LOCK_HELD);
    CHECK(lost_calls == 0);
    /* Guards never outlive their client: released, then the client is
     * assigned over (the old one freed) and the new one works. */
    f.release();
    CHECK(m.gone("cpp:move:e"));
    c = redlock::client(m.cfg());
    CHECK(c);
    redlock::guard g = c.acquire("cpp:move:g");
    CHECK(m.present("cpp:move:g") >= 2);
}

struct scenario {
    const char *name;
    void (*run)(const masters &);
};
constexpr scenario scenarios[] = {
    {"guard", guard_scope},       {"contention", contention}, {"unique_lock", unique_lock},
    {"scoped_lock", scoped_lock}, {"extend", extend},         {"auto_extend", auto_extend},
    {"lost", lost},               {"errors", errors},         {"moves", moves},
};

} // namespace

int main(int argc, char **argv)
{
    const scenario *chosen = nullptr;
    for (const scenario &sc : scenarios)
        if (argc == 2 && std::strcmp(sc.name, argv[1]) == 0)
            chosen = &sc;
    if (chosen == nullptr) {
        std::fprintf(stderr, "usage: test_cpp SCENARIO\n");
        return 2;
    }
    masters m;
    if (!m.ok()) {
        std::fprintf(stderr, "test_cpp: the masters did not start\n");
        return 1;
    }
    try {
        chosen->run(m);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "test_cpp %s: uncaught: %s\n", argv[1], e.what());
        failures++;
    }
    if (failures != 0)
        std::fprintf(stderr, "test_cpp %s: %d check(s) failed\n", argv[1], failures);
    return failures == 0 ? 0 : 1;
}
