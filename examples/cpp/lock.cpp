// SPDX-License-Identifier: BSD-3-Clause
// The C++ face (docs/cpp.md): a job under a lock kept extended, then a
// mutex with std::unique_lock.
//
//   lock [CONFIG] [RESOURCE]
//
// CONFIG defaults to $REDLOCK_CONFIG; RESOURCE to "example-cpp". Exits 0
// when both locks were taken and released, 75 when another holder has the
// resource, 1 on any other failure.
#include <redlock/redlock.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : std::getenv("REDLOCK_CONFIG");
    std::string resource = argc > 2 ? argv[2] : "example-cpp";
    if (path == nullptr) {
        std::fprintf(stderr, "usage: %s CONFIG [RESOURCE] (or set REDLOCK_CONFIG)\n", argv[0]);
        return 1;
    }
    try {
        redlock::client client = redlock::client::from_file(path);

        // A guard: released when it goes out of scope.
        std::error_code ec;
        redlock::guard job = client.acquire(resource, ec);
        if (ec == redlock::errc::conflict) {
            std::fprintf(stderr, "%s is held by another holder\n", resource.c_str());
            return 75;
        }
        if (ec)
            throw std::system_error(ec, "acquire " + resource);
        std::atomic<bool> lost{false};
        job.auto_extend([&lost](std::error_code why) {
            lost = true; // on the client's I/O thread: short, never blocking
            std::fprintf(stderr, "lock lost: %s\n", why.message().c_str());
        });
        std::printf("holding %s (fencing token %llu, %lld ms left)\n", resource.c_str(),
                    static_cast<unsigned long long>(job.fencing_token()),
                    static_cast<long long>(job.validity().count()));
        for (int step = 0; step < 3 && !lost; step++)
            std::this_thread::sleep_for(std::chrono::milliseconds(10)); // the work, checking `lost` between steps
        job.release();

        // A mutex: any standard lock type, here waiting up to 2 s.
        redlock::mutex mutex(client, resource, std::chrono::seconds(10));
        // cppcheck-suppress localMutex ; held on the masters, seen by every process
        std::unique_lock<redlock::mutex> held(mutex, std::defer_lock);
        if (!held.try_lock_for(std::chrono::seconds(2))) {
            std::fprintf(stderr, "%s is held by another holder\n", resource.c_str());
            return 75;
        }
        mutex.held().extend(std::chrono::seconds(20));
        std::printf("holding %s again, %lld ms left\n", resource.c_str(),
                    static_cast<long long>(mutex.held().validity().count()));
        return 0; // `held` unlocks, then `client` stops
    } catch (const std::system_error &e) {
        std::fprintf(stderr, "%s (%s)\n", e.what(), redlock::status_name(e.code()));
        return 1;
    }
}
