/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libredlock's C++17 face (docs/cpp.md): header-only, over the blocking
 * client of <redlock/redlock.h> (redlock_sync_*), in namespace redlock.
 *
 *   redlock::client  an owning blocking client (move-only)
 *   redlock::guard   a held lock, released when it goes out of scope
 *                    (move-only): extend(), auto_extend(), fencing_token(),
 *                    validity(), value()
 *   redlock::mutex   Lockable and TimedLockable over one resource, for
 *                    std::unique_lock, std::scoped_lock, std::lock_guard
 *   redlock::errc    the statuses as a std::error_code enum, in
 *                    redlock::category() (messages from redlock_strerror())
 *
 * Errors: every call that can fail has two forms, one taking a
 * std::error_code& (noexcept, the status set there, cleared on success) and
 * one throwing std::system_error with that code. Nothing releases or frees
 * by throwing: destructors and mutex::unlock() never throw (a release that
 * fails leaves the keys to expire with their TTL, and is kept for
 * mutex::last_unlock_error()).
 *
 * Lifetimes: a guard or mutex refers to its client, which must outlive it.
 * Threads: as the C API's blocking client (redlock.h, "Threads"): one client
 * may serve any number of threads; a guard or a mutex is used by one thread
 * at a time.
 */
#ifndef REDLOCK_REDLOCK_HPP
#define REDLOCK_REDLOCK_HPP

#include <redlock/redlock.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

namespace redlock {

/* ---- Errors ------------------------------------------------------------ */

/* The statuses of REDLOCK_STATUS_MAP, by value. A status a later library
 * adds still makes an error_code in category(), unnamed here. */
enum class errc : int {
    ok = REDLOCK_OK,
    conflict = REDLOCK_ECONFLICT,
    no_quorum = REDLOCK_ENOQUORUM,
    expired = REDLOCK_EEXPIRED,
    not_owner = REDLOCK_ENOTOWNER,
    invalid_argument = REDLOCK_EINVAL,
    no_memory = REDLOCK_ENOMEM,
    auth = REDLOCK_EAUTH,
    reply = REDLOCK_EREPLY,
    config = REDLOCK_ECONFIG,
    canceled = REDLOCK_ECANCELED,
    busy = REDLOCK_EBUSY,
    system = REDLOCK_ESYS,
    not_supported = REDLOCK_ENOTSUP,
    max_hold = REDLOCK_EMAXHOLD,
    no_fence = REDLOCK_ENOFENCE,
    overload = REDLOCK_EOVERLOAD,
    clock = REDLOCK_ECLOCK,
    max_ttl = REDLOCK_EMAXTTL,
    restarted = REDLOCK_ERESTARTED,
    permission = REDLOCK_EPERM,
    no_space = REDLOCK_ENOSPC,
};

namespace detail {
class status_category final : public std::error_category {
public:
    const char *name() const noexcept override { return "redlock"; }
    std::string message(int status) const override { return redlock_strerror(status); }
    /* The portable conditions some statuses mean, so that a caller may
     * compare with std::errc. */
    std::error_condition default_error_condition(int status) const noexcept override
    {
        switch (status) {
        case REDLOCK_EINVAL: return std::errc::invalid_argument;
        case REDLOCK_ENOMEM: return std::errc::not_enough_memory;
        case REDLOCK_ECANCELED: return std::errc::operation_canceled;
        case REDLOCK_ENOTSUP: return std::errc::not_supported;
        case REDLOCK_EPERM: return std::errc::operation_not_permitted;
        default: return std::error_condition(status, *this);
        }
    }
};
} // namespace detail

/* The category of every libredlock status: name() "redlock", message() the
 * status's redlock_strerror(). One object for the whole program. */
inline const std::error_category &category() noexcept
{
    static const detail::status_category instance;
    return instance;
}

inline std::error_code make_error_code(errc e) noexcept
{
    return {static_cast<int>(e), category()};
}

/* An error_code for a status returned by a C function: empty for
 * REDLOCK_OK. */
inline std::error_code make_error_code(int status) noexcept
{
    return {status, category()};
}

/* The status's name, e.g. "REDLOCK_ECONFLICT" (redlock_status_name()). */
inline const char *status_name(const std::error_code &ec) noexcept
{
    return ec.category() == category() ? redlock_status_name(ec.value()) : "REDLOCK_UNKNOWN";
}

namespace detail {
inline void throw_if(const std::error_code &ec, const char *what)
{
    if (ec)
        throw std::system_error(ec, what);
}
inline bool set(std::error_code &ec, int status) noexcept
{
    ec = make_error_code(status);
    return status == REDLOCK_OK;
}
inline int64_t to_ms(std::chrono::milliseconds d) noexcept
{
    return static_cast<int64_t>(d.count());
}
} // namespace detail

} // namespace redlock

namespace std {
template <> struct is_error_code_enum<redlock::errc> : true_type {};
} // namespace std

namespace redlock {

class guard;
class mutex;

/* Called on the client's I/O thread when auto-extension gives a lock up
 * (the status: why); see redlock_sync_auto_extend(). Short, never blocking,
 * and never calling the client's blocking functions. */
using lost_handler = std::function<void(std::error_code)>;

/* ---- Client ------------------------------------------------------------ */

/* An owning blocking client (redlock_sync): its I/O thread starts with it;
 * its destructor releases the locks it still holds and stops it
 * (redlock_sync_free()). Move-only; a moved-from client is empty. */
class client {
public:
    /* From a config, copied: cfg may be freed after. */
    explicit client(const redlock_config &cfg) { detail::throw_if(open(cfg), "redlock client"); }
    client(const redlock_config &cfg, std::error_code &ec) noexcept { ec = open(cfg); }

    /* From a YAML config file (docs/config.md). A bad file throws
     * errc::config, its message naming file:line:column and the key. */
    static client from_file(const std::string &path)
    {
        char why[REDLOCK_ERRBUF_SIZE] = "";
        redlock_config *cfg = nullptr;
        int rc = redlock_config_load_file(&cfg, path.c_str(), why, sizeof why);
        if (rc != REDLOCK_OK)
            throw std::system_error(make_error_code(rc), why[0] != '\0' ? why : path);
        std::unique_ptr<redlock_config, void (*)(redlock_config *)> owned(cfg, redlock_config_free);
        return client(*owned);
    }
    static client from_file(const std::string &path, std::error_code &ec) noexcept
    {
        redlock_config *cfg = nullptr;
        client c;
        if (detail::set(ec, redlock_config_load_file(&cfg, path.c_str(), nullptr, 0))) {
            ec = c.open(*cfg);
            redlock_config_free(cfg);
        }
        return c;
    }

    client(client &&other) noexcept : sync_(std::exchange(other.sync_, nullptr)) {}
    client &operator=(client &&other) noexcept
    {
        if (this != &other) {
            redlock_sync_free(sync_);
            sync_ = std::exchange(other.sync_, nullptr);
        }
        return *this;
    }
    client(const client &) = delete;
    client &operator=(const client &) = delete;
    ~client() { redlock_sync_free(sync_); }

    /* Acquire resource (redlock_sync_acquire()): opts nullptr for the
     * config's TTL and retries. The guard holds it; an empty guard and ec
     * set on failure (errc::conflict when another holder has it). */
    guard acquire(std::string_view resource, const redlock_acquire_options *opts = nullptr);
    guard acquire(std::string_view resource, std::error_code &ec,
                  const redlock_acquire_options *opts = nullptr) noexcept;

    /* The C client, for the functions this face does not wrap (it stays
     * owned by this object). nullptr when empty. */
    redlock_sync *native_handle() const noexcept { return sync_; }
    explicit operator bool() const noexcept { return sync_ != nullptr; }

private:
    client() noexcept = default;
    std::error_code open(const redlock_config &cfg) noexcept
    {
        return make_error_code(redlock_sync_new(&sync_, &cfg));
    }

    redlock_sync *sync_ = nullptr;
};

/* ---- Guard ------------------------------------------------------------- */

/* A lock held through a client: released (redlock_sync_release()) and its
 * handle freed when the guard is destroyed or assigned over, whatever the
 * release says. Move-only; a moved-from or default guard holds nothing. */
class guard {
public:
    guard() noexcept = default;
    guard(guard &&other) noexcept
        : sync_(std::exchange(other.sync_, nullptr)), lock_(std::exchange(other.lock_, nullptr)),
          lost_(std::move(other.lost_))
    {
    }
    guard &operator=(guard &&other) noexcept
    {
        if (this != &other) {
            std::error_code ignored;
            release(ignored);
            sync_ = std::exchange(other.sync_, nullptr);
            lock_ = std::exchange(other.lock_, nullptr);
            lost_ = std::move(other.lost_);
        }
        return *this;
    }
    guard(const guard &) = delete;
    guard &operator=(const guard &) = delete;
    ~guard()
    {
        std::error_code ignored;
        release(ignored);
    }

    /* Whether it holds a handle (not released yet). It may have expired or
     * been lost meanwhile: see validity() and state(). */
    bool owns_lock() const noexcept { return lock_ != nullptr; }
    explicit operator bool() const noexcept { return owns_lock(); }

    /* Reset the TTL on a quorum (redlock_sync_extend()); 0: the TTL it was
     * acquired with. errc::not_owner when it is no longer held. */
    void extend(std::chrono::milliseconds ttl = std::chrono::milliseconds(0))
    {
        std::error_code ec;
        extend(ttl, ec);
        detail::throw_if(ec, "redlock extend");
    }
    void extend(std::chrono::milliseconds ttl, std::error_code &ec) noexcept
    {
        if (lock_ == nullptr) {
            ec = make_error_code(errc::invalid_argument);
            return;
        }
        detail::set(ec, redlock_sync_extend(sync_, lock_, detail::to_ms(ttl), nullptr));
    }

    /* Keep it extended on the I/O thread (redlock_sync_auto_extend());
     * on_lost (may be empty) runs there if it is given up. */
    void auto_extend(lost_handler on_lost = {})
    {
        std::error_code ec;
        auto_extend(std::move(on_lost), ec);
        detail::throw_if(ec, "redlock auto-extend");
    }
    void auto_extend(lost_handler on_lost, std::error_code &ec) noexcept
    {
        if (lock_ == nullptr) {
            ec = make_error_code(errc::invalid_argument);
            return;
        }
        /* On the heap: the I/O thread keeps its address while the guard
         * moves. Kept until the handle is freed. */
        std::unique_ptr<lost_handler> handler;
        if (on_lost) {
            try {
                handler = std::make_unique<lost_handler>(std::move(on_lost));
            } catch (...) {
                ec = make_error_code(errc::no_memory);
                return;
            }
        }
        int rc = redlock_sync_auto_extend(sync_, lock_, handler ? &guard::on_lost : nullptr,
                                          handler.get());
        if (detail::set(ec, rc) && handler)
            lost_ = std::move(handler);
    }

    /* Release now (redlock_sync_release()); the guard holds nothing after,
     * whatever the outcome. errc::not_owner when it was no longer held on a
     * quorum (it had expired or was taken over). */
    void release()
    {
        std::error_code ec;
        release(ec);
        detail::throw_if(ec, "redlock release");
    }
    void release(std::error_code &ec) noexcept
    {
        if (lock_ == nullptr) {
            ec.clear();
            return;
        }
        /* The release runs on the I/O thread and stops auto-extension
         * there: no lost handler runs once it returns. */
        detail::set(ec, redlock_sync_release(sync_, lock_, nullptr));
        redlock_lock_free(lock_);
        lock_ = nullptr;
        sync_ = nullptr;
        lost_.reset();
    }

    /* The fencing token (docs/fencing.md); 0 when acquired without one. */
    std::uint64_t fencing_token() const noexcept { return redlock_lock_fencing_token(lock_); }
    /* How long the holder may still act, by the monotonic clock; zero or
     * less: do not rely on the lock. */
    std::chrono::milliseconds validity() const noexcept
    {
        return std::chrono::milliseconds(lock_ != nullptr ? redlock_lock_validity_ms(lock_) : 0);
    }
    /* The lock's value on the masters (random; with holder metadata when
     * acquired with a label); "" when empty. */
    std::string value() const
    {
        size_t len = 0;
        const char *v = lock_ != nullptr ? redlock_lock_value(lock_, &len) : nullptr;
        return v != nullptr ? std::string(v, len) : std::string();
    }
    /* redlock_lock_state(): REDLOCK_LOCK_HELD, _EXPIRED, _LOST, ...;
     * REDLOCK_LOCK_RELEASED when empty. */
    int state() const noexcept
    {
        return lock_ != nullptr ? redlock_lock_state(lock_) : REDLOCK_LOCK_RELEASED;
    }

    /* The C handle, still owned by the guard. nullptr when empty. */
    redlock_lock *native_handle() const noexcept { return lock_; }

private:
    friend class client;
    guard(redlock_sync *sync, redlock_lock *lock) noexcept : sync_(sync), lock_(lock) {}
    static void on_lost(int status, redlock_lock * /*lock*/, void *arg)
    {
        try {
            (*static_cast<lost_handler *>(arg))(make_error_code(status));
        } catch (...) {
            /* Nothing may unwind into the library's I/O thread. */
        }
    }

    redlock_sync *sync_ = nullptr;
    redlock_lock *lock_ = nullptr;
    std::unique_ptr<lost_handler> lost_;
};

inline guard client::acquire(std::string_view resource, std::error_code &ec,
                             const redlock_acquire_options *opts) noexcept
{
    redlock_lock *lock = nullptr;
    if (!detail::set(ec, redlock_sync_acquire(sync_, resource.data(), resource.size(), opts,
                                              &lock, nullptr)))
        return guard();
    return guard(sync_, lock);
}

inline guard client::acquire(std::string_view resource, const redlock_acquire_options *opts)
{
    std::error_code ec;
    guard g = acquire(resource, ec, opts);
    detail::throw_if(ec, "redlock acquire");
    return g;
}

/* ---- Mutex ------------------------------------------------------------- */

/*
 * One resource as a standard Lockable and TimedLockable: lock(), try_lock(),
 * try_lock_for(), try_lock_until(), unlock(), for std::unique_lock (with
 * std::defer_lock, std::try_to_lock), std::scoped_lock and std::lock_guard.
 *
 * - lock() waits while another holder has the resource (each attempt with
 *   the options' retry policy, again and again while the outcome is
 *   errc::conflict); any other failure (no quorum, bad credentials, ...)
 *   throws std::system_error.
 * - try_lock() makes one attempt: false on errc::conflict, throws on other
 *   failures. try_lock_for(d) retries until d has passed (the acquire's
 *   wait_ms): false when the resource was still held by another.
 * - unlock() never throws (std::unique_lock calls it from its destructor):
 *   a release that fails leaves the keys to expire with their TTL, and
 *   last_unlock_error() says why.
 * Not recursive; locking it twice is errc::busy (std::system_error).
 * Neither copied nor moved, as std::mutex. One thread at a time.
 */
class mutex {
public:
    /* ttl 0: the config's. */
    mutex(client &c, std::string resource,
          std::chrono::milliseconds ttl = std::chrono::milliseconds(0))
        : client_(&c), resource_(std::move(resource))
    {
        redlock_acquire_options_init(&opts_);
        if (ttl.count() > 0)
            opts_.ttl_ms = detail::to_ms(ttl);
    }
    /* With acquire options (their retry_count and wait_ms are the mutex's
     * own for try_lock and try_lock_for; owner and label must outlive it). */
    mutex(client &c, std::string resource, const redlock_acquire_options &opts)
        : client_(&c), resource_(std::move(resource)), opts_(opts)
    {
    }
    mutex(const mutex &) = delete;
    mutex &operator=(const mutex &) = delete;
    ~mutex() = default; /* releases a lock still held, through the guard */

    void lock()
    {
        check_not_held();
        for (;;) {
            std::error_code ec;
            held_ = client_->acquire(resource_, ec, &opts_);
            if (!ec)
                return;
            if (ec != errc::conflict)
                throw std::system_error(ec, "redlock lock " + resource_);
        }
    }
    bool try_lock()
    {
        check_not_held();
        redlock_acquire_options once = opts_;
        once.retry_count = 0;
        return attempt(once);
    }
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period> &d)
    {
        check_not_held();
        /* In double first: a duration as long as hours::max() would
         * overflow in milliseconds. A year is as good as forever here. */
        constexpr double year_ms = 365.0 * 24 * 3600 * 1000;
        double asked = std::chrono::duration<double, std::milli>(d).count();
        redlock_acquire_options within = opts_;
        within.retry_count = std::numeric_limits<std::int32_t>::max();
        within.wait_ms = 0;
        if (asked >= year_ms)
            within.wait_ms = static_cast<int64_t>(year_ms);
        else if (asked > 0)
            within.wait_ms = detail::to_ms(std::chrono::ceil<std::chrono::milliseconds>(d));
        else
            within.retry_count = 0;
        return attempt(within);
    }
    template <class Clock, class Duration>
    bool try_lock_until(const std::chrono::time_point<Clock, Duration> &t)
    {
        return try_lock_for(t - Clock::now());
    }
    void unlock() noexcept { held_.release(unlock_error_); }

    /* Whether this mutex holds its resource now (until unlock()). */
    bool owns_lock() const noexcept { return held_.owns_lock(); }
    /* The held lock, for extend(), auto_extend(), fencing_token(),
     * validity(): empty while not locked. */
    guard &held() noexcept { return held_; }
    const guard &held() const noexcept { return held_; }
    /* Why the last unlock() failed; empty when it succeeded. */
    std::error_code last_unlock_error() const noexcept { return unlock_error_; }
    const std::string &resource() const noexcept { return resource_; }

private:
    void check_not_held() const
    {
        if (held_.owns_lock())
            throw std::system_error(make_error_code(errc::busy),
                                    "redlock mutex already locked: " + resource_);
    }
    bool attempt(const redlock_acquire_options &opts)
    {
        std::error_code ec;
        held_ = client_->acquire(resource_, ec, &opts);
        if (!ec)
            return true;
        if (ec == errc::conflict)
            return false;
        throw std::system_error(ec, "redlock try_lock " + resource_);
    }

    client *client_;
    std::string resource_;
    redlock_acquire_options opts_;
    guard held_;
    std::error_code unlock_error_;
};

} // namespace redlock

#endif
