/**
 * @file conduit.h
 * @brief Conduits: tagged message channels between two tasks.
 *
 * A conduit joins a source task and a destination task and carries messages both ways;
 * the two directions are independent. Every message has a tag (0 .. UTC_CONDUIT_TAG_MAX):
 * messages with the same tag arrive in the order they were written, and a reader waiting
 * for tag B is never held up by unread messages with another tag.
 *
 * The runtime picks the transport when the conduit is created (see utc_conduit_transport):
 * - **in-process** when both tasks' entry threads live in the same rank: a lock-free ring
 *   per direction, small until traffic needs more (an idle conduit holds a few KiB).
 *   Messages up to `inline_max` bytes (4 KiB by default) are copied into the
 *   ring and the writer returns at once; larger ones are copied once, by the reader,
 *   straight from the writer's buffer, and the writer returns when that copy is done.
 *   utc_conduit_write_owned hands a buffer across in constant time, whatever its size.
 * - **node-local** when the entry ranks differ but run on one host: a FIFO per pair of
 *   ranks in shared memory that both processes map; large messages are copied once, by
 *   the reader, straight from the writer's buffer (cross-memory attach) where the kernel
 *   allows it, else pipelined through the shared ring. The environment variable
 *   UTC_TRANSPORT=mpi or the option `transport` = UTC_CONDUIT_MPI makes such conduits use
 *   MPI; so does a host where the shared memory cannot be set up (from the first
 *   node-local conduit on, on every rank alike).
 * - **MPI** otherwise: point-to-point messages on a communicator of the conduit's own.
 *
 * Who calls what:
 * - utc_conduit_write / utc_conduit_read (and _owned, _to, _from, _timeout): called by
 *   **every** local thread of the calling task, with the same arguments; local thread 0
 *   performs the transfer and all return once it is done, with the same status.
 * - utc_conduit_write_by / utc_conduit_read_by (and read_timeout_by, and the free-mode
 *   write_to_by, read_from_by, read_from_timeout_by): performed by the named local thread;
 *   the other threads of the task may call it too and return UTC_OK at once (so SPMD task
 *   code can call it from every thread, as in the dissertation).
 * - utc_conduit_iwrite / utc_conduit_iread: called by one thread, which gets a request.
 *
 * Tasks on several ranks: in single-entry mode (the default) only the entry rank of each
 * task (the rank of its first proc-list entry) transfers; calls on other ranks return
 * UTC_ERR_NOT_MEMBER. In free mode any rank of either task may transfer with any rank of
 * the other, naming the peer with the _to / _from forms (dissertation, figure 3.10).
 *
 * Every blocking call sleeps after a short spin: a thread waiting in a conduit costs no CPU.
 */
#ifndef UTC_CONDUIT_H
#define UTC_CONDUIT_H

#include <stdbool.h>
#include <stddef.h>
#include <utc/status.h>
#include <utc/task.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A conduit between two tasks (opaque). */
typedef struct utc_conduit utc_conduit_t;
/** An asynchronous conduit operation in flight (opaque). */
typedef struct utc_request utc_request_t;

/** Largest message tag (tags are 0 .. UTC_CONDUIT_TAG_MAX). */
#define UTC_CONDUIT_TAG_MAX ((1 << 22) - 1)

/** Any tag: for utc_conduit_read_any and the probes, the next message whatever its tag. */
#define UTC_ANY_TAG (-1)

/** What a probe found, or what an any-tag read got (MPI_Status's part that UTC needs). */
typedef struct utc_msg_info {
    size_t size; /**< the message's size in bytes */
    int tag;     /**< its tag */
    int peer;    /**< the world rank it comes from */
} utc_msg_info_t;

/** Default in-process inline threshold: messages up to this size are copied into the ring. */
#define UTC_CONDUIT_INLINE_DEFAULT 4096
/** Default number of slots of each in-process ring. */
#define UTC_CONDUIT_SLOTS_DEFAULT 64

/** How a conduit between tasks on several ranks moves data (dissertation, figure 3.10). */
typedef enum utc_conduit_mode {
    /** Only each task's entry rank (its first proc-list entry) transfers. The default. */
    UTC_CONDUIT_SINGLE_ENTRY = 0,
    /** Any rank of one task transfers with any rank of the other; the caller names the peer. */
    UTC_CONDUIT_FREE = 1
} utc_conduit_mode_t;

/** The transport a conduit uses between two ranks (and, as an option, the one asked for). */
typedef enum utc_conduit_transport {
    UTC_CONDUIT_NONE = 0,   /**< no transfer possible (not used by a valid conduit); as
                             * the option utc_conduit_options_t.transport: automatic */
    UTC_CONDUIT_INPROC = 1, /**< both ends in this process: lock-free rings */
    UTC_CONDUIT_MPI = 2,    /**< ends in different ranks: MPI point-to-point */
    UTC_CONDUIT_NODE = 3    /**< ends in different ranks of one host: memory both map */
} utc_conduit_transport_t;

/** What memory a conduit's messages are in (utc_conduit_options_t.memory). */
typedef enum utc_conduit_memory {
    /** Host memory: today's conduits (the default; no cost of the device layer). */
    UTC_CONDUIT_MEM_HOST = 0,
    /** Device memory (CUDA): every message is a device message. The calls take device or
     * host pointers (told apart per call); the data moves by the cheapest path between the
     * two ranks (utc_conduit_device_path), ordered on the callers' streams. See
     * doc/guide/device-conduits.md. */
    UTC_CONDUIT_MEM_DEVICE = 1
} utc_conduit_memory_t;

/** Largest tag of a device conduit (UTC_CONDUIT_MEM_DEVICE): the top two tags of the range
 * are the device layer's own. */
#define UTC_CONDUIT_DEVICE_TAG_MAX (UTC_CONDUIT_TAG_MAX - 2)

/** Options of utc_conduit_create. Start from UTC_CONDUIT_OPTIONS_INIT. */
typedef struct utc_conduit_options {
    utc_conduit_mode_t mode; /**< single-entry (default) or free */
    /** In-process: messages up to this many bytes are copied into the ring, so the writer
     * returns at once; larger ones are copied by the reader from the writer's buffer.
     * 0 .. 1 MiB; default UTC_CONDUIT_INLINE_DEFAULT. */
    size_t inline_max;
    /** In-process: the most slots per direction (how far writers may run ahead of the
     * reader before they wait), a power of two from 2 to 65536; default
     * UTC_CONDUIT_SLOTS_DEFAULT. A direction starts on a small ring of its own (8 slots of
     * up to 80 bytes inline, about 1 KiB) and takes the full ring, about
     * ring_slots * inline_max bytes, only while its traffic needs it (a message over 80
     * bytes, or more than 8 unread); after a quiet stretch it gives that memory back. */
    unsigned ring_slots;
    /** Share-mode shared conduits only (utc_conduit_create_shared with UTC_SHARED_SHARE):
     * each reader's credit window, the most messages it asks each writer for ahead of its
     * reads, so the next ones are on their way while it works on one. 1 asks only when a
     * read starts (a round trip per message); 0 (the default) takes the environment
     * variable UTC_SHARE_CREDITS when it is set, else UTC_CONDUIT_CREDITS_DEFAULT. At most
     * UTC_CONDUIT_CREDITS_MAX; any other conduit refuses a value other than 0. */
    int credits;
    /** The transport between two ranks: UTC_CONDUIT_NONE (0, the default) chooses
     * automatically, as the environment variable UTC_TRANSPORT says (`auto`, the default:
     * node-local between ranks of one host, MPI across hosts; `mpi`: MPI between every two
     * ranks); UTC_CONDUIT_MPI forces MPI between every two ranks (for comparison, or where
     * shared memory is refused); UTC_CONDUIT_NODE asks for node-local between ranks of one
     * host (MPI across hosts still) whatever UTC_TRANSPORT says. The option wins over the
     * variable. Ends in one rank always use in-process rings: UTC_CONDUIT_INPROC is refused
     * (UTC_ERR_INVALID_ARG). Every rank must resolve it alike (UTC_ERR_MISMATCH). */
    utc_conduit_transport_t transport;
    /** The memory its messages are in: UTC_CONDUIT_MEM_HOST (0, the default) or
     * UTC_CONDUIT_MEM_DEVICE (device data, stream-ordered; needs a build with CUDA and a
     * device on every rank of the conduit's tasks, else creation fails with
     * UTC_ERR_NO_GPU_SUPPORT on every rank). Device conduits take tags 0 ..
     * UTC_CONDUIT_DEVICE_TAG_MAX and refuse sendrecv (UTC_ERR_UNSUPPORTED);
     * utc_conduit_create_shared refuses the option. Every rank must pass the same value
     * (UTC_ERR_MISMATCH). */
    utc_conduit_memory_t memory;
} utc_conduit_options_t;

/** Share mode's default credit window: a reader's next message is on its way while it
 * works on the current one. */
#define UTC_CONDUIT_CREDITS_DEFAULT 2
/** The largest credit window. */
#define UTC_CONDUIT_CREDITS_MAX 256

/** Default options: single-entry mode, 4 KiB inline threshold, 64 slots per ring, the
 * default credit window, the transport chosen automatically. */
#define UTC_CONDUIT_OPTIONS_INIT                                                         \
    { .mode = UTC_CONDUIT_SINGLE_ENTRY, .inline_max = UTC_CONDUIT_INLINE_DEFAULT,         \
      .ring_slots = UTC_CONDUIT_SLOTS_DEFAULT, .credits = 0,                              \
      .transport = UTC_CONDUIT_NONE, .memory = UTC_CONDUIT_MEM_HOST }

/**
 * @brief Create a conduit between two tasks.
 *
 * Collective over all ranks, in the same order with the same arguments (like
 * utc_task_create); call it from the main thread. The transports are chosen here, for each
 * pair of ranks that will talk: in-process rings on the rank(s) that hold both ends,
 * node-local between ranks of one host, an MPI communicator of the conduit's own across
 * hosts (or between every two ranks when `opts->transport` or UTC_TRANSPORT asks for MPI).
 * Blocks (MPI communicator creation).
 * @param src      source task ("S-task")
 * @param dst      destination task ("D-task"); src itself in free mode: a task's conduit to
 *                 itself joins its ranks point to point (write_to / read_from / sendrecv
 *                 naming ranks of the task), next to its collectives
 * @param opts     options, or NULL for UTC_CONDUIT_OPTIONS_INIT
 * @param[out] out the conduit, set only on success
 * @return UTC_OK; UTC_ERR_NOT_INITIALIZED; UTC_ERR_INVALID_ARG (NULL argument, src == dst
 *         outside free mode,
 *         bad option, credits other than 0: they are for share-mode shared conduits,
 *         transport UTC_CONDUIT_INPROC or unknown, UTC_TRANSPORT neither `auto` nor `mpi`);
 *         UTC_ERR_INVALID_HANDLE (a task is not live); UTC_ERR_NO_MEMORY;
 *         UTC_ERR_MPI; UTC_ERR_UNSUPPORTED (MPI's tag range is too small);
 *         UTC_ERR_MISMATCH on every rank when the ranks passed different ends or options,
 *         or only some of them bad arguments, or are in different collective calls.
 */
utc_status_t utc_conduit_create(utc_task_t *src, utc_task_t *dst,
                                const utc_conduit_options_t *opts, utc_conduit_t **out)
    __attribute__((warn_unused_result));

/**
 * @brief Destroy a conduit. Collective over all ranks; call it from the main thread, before
 * the tasks are destroyed.
 *
 * Operations still pending or blocked on the conduit on this rank end with
 * UTC_ERR_CANCELED: blocked reads and writes return it, requests complete with it (wait
 * for them as usual). Each rank's destroy ends its own ranks' operations. The conduit's
 * memory is released when the last of them has left. Unread messages are dropped (owned
 * buffers in them are freed). Afterwards every new call on the handle returns
 * UTC_ERR_INVALID_HANDLE. utc_finalize destroys conduits left alive. Does not wait for
 * the other ranks.
 * @param conduit the conduit
 * @return UTC_OK; UTC_ERR_INVALID_HANDLE if `conduit` is not a live conduit;
 *         UTC_ERR_DEADLOCK when called from a thread of one of its two tasks.
 */
utc_status_t utc_conduit_destroy(utc_conduit_t *conduit);

/** @brief The conduit's id (equal on all ranks), or a negative status. */
int utc_conduit_id(const utc_conduit_t *conduit);

/**
 * @brief The transport between the two tasks' entry ranks (the same on all ranks):
 * UTC_CONDUIT_INPROC, UTC_CONDUIT_NODE or UTC_CONDUIT_MPI (a shared conduit: the widest
 * its pairs of entries use); UTC_CONDUIT_NONE if the handle is not live.
 */
utc_conduit_transport_t utc_conduit_transport(const utc_conduit_t *conduit);

/**
 * @brief The path a device conduit's messages take between this rank and the other end
 * (the other task's entry rank; in free mode, that rank too):
 * - "handover": both ends in this process; the writer's data is copied into a buffer
 *   allocated on its stream and handed over with an event (utc_conduit_write_owned of a
 *   utc_gpu_malloc buffer hands the buffer itself, no copy);
 * - "ipc": another rank of this host where CUDA IPC works; one device-to-device copy by
 *   the reader, and the write returns once the reader's copy is queued (a rendezvous);
 * - "staged": another host, or IPC refused or turned off (environment UTC_DEVICE_IPC=0);
 *   a pipeline of pinned host chunks (UTC_DEVICE_CHUNK bytes, default 4 MiB).
 * Does not block.
 * @param conduit the conduit
 * @param[out] name the path's name (a static string), set only on success
 * @return UTC_OK; UTC_ERR_INVALID_HANDLE (not a live conduit); UTC_ERR_INVALID_ARG (name
 *         is NULL, or the conduit is a host-memory one: it has no device path);
 *         UTC_ERR_NOT_MEMBER (this rank holds neither end's transferring rank).
 */
utc_status_t utc_conduit_device_path(const utc_conduit_t *conduit, const char **name);

/* ---- blocking operations called by every local thread of the task ---- */

/**
 * @brief Write a message to the other task. Called by every local thread of the calling
 * task with the same arguments; local thread 0 sends and all return when it is done.
 *
 * Blocks until `buf` may be reused: in-process, at once for messages up to `inline_max`
 * (unless the ring is full), otherwise when the reader has copied the message; over MPI,
 * when MPI has finished with the buffer (for a large message, when the reader receives it).
 * @param conduit the conduit; the calling thread must belong to one of its tasks
 * @param buf     the data (may be NULL when size is 0)
 * @param size    bytes to send (any size memory allows; over MPI a message above 2 GiB
 *                travels as one derived datatype)
 * @param tag     0 .. UTC_CONDUIT_TAG_MAX
 * @return UTC_OK; UTC_ERR_INVALID_HANDLE (not a live conduit); UTC_ERR_NOT_MEMBER (caller
 *         is not a thread of either task, or, in single-entry mode, not on its task's entry
 *         rank); UTC_ERR_INVALID_ARG (negative or too large tag, NULL buf with size > 0,
 *         a size or capacity above PTRDIFF_MAX, on both transports); UTC_ERR_NO_MEMORY; UTC_ERR_MPI; UTC_ERR_CANCELED
 *         (the conduit was destroyed meanwhile); UTC_ERR_PEER_FAILED (a run of one of the
 *         conduit's tasks failed, on any rank, and no run of it was queued here since;
 *         a message then crossing to another rank may stay in MPI's hands until the
 *         conduit is destroyed: keep `buf` until then, see doc/guide/lifetimes.md).
 */
utc_status_t utc_conduit_write(utc_conduit_t *conduit, const void *buf, size_t size, int tag);

/**
 * @brief Read the next message with `tag` from the other task. Called by every local
 * thread of the calling task with the same arguments; local thread 0 receives and all
 * return when it is done. Blocks (sleeping after a short spin) until a message arrives.
 *
 * If the message is larger than `capacity`, nothing is received: the call fails with
 * UTC_ERR_TRUNCATE, the message stays queued (the next read of that tag gets it), and
 * `*received` is set to the message's size so the caller can retry with a big enough
 * buffer (this is the one error on which an output parameter is set).
 * @param conduit  the conduit
 * @param buf      where to put the data (may be NULL when capacity is 0)
 * @param capacity bytes available at buf
 * @param tag      0 .. UTC_CONDUIT_TAG_MAX
 * @param[out] received the message's size (may be NULL)
 * @return UTC_OK; UTC_ERR_TRUNCATE; UTC_ERR_CLOSED (end of stream: the writer closed its
 *         side with utc_conduit_close and no message of this tag is left); and the errors
 *         of utc_conduit_write.
 */
utc_status_t utc_conduit_read(utc_conduit_t *conduit, void *buf, size_t capacity, int tag,
                              size_t *received);

/**
 * @brief utc_conduit_read with a time limit. Blocks at most about `timeout_s` seconds.
 * @param conduit  the conduit
 * @param buf      where to put the data (may be NULL when capacity is 0)
 * @param capacity bytes available at buf
 * @param tag      0 .. UTC_CONDUIT_TAG_MAX
 * @param[out] received the message's size (may be NULL)
 * @param timeout_s seconds to wait; < 0 waits forever, 0 only checks what has arrived;
 *                  NaN is refused
 * @return as utc_conduit_read, plus UTC_ERR_TIMEOUT when no message came in time (then
 *         nothing was received and no later message is lost); UTC_ERR_INVALID_ARG for a
 *         NaN timeout.
 */
utc_status_t utc_conduit_read_timeout(utc_conduit_t *conduit, void *buf, size_t capacity,
                                      int tag, size_t *received, double timeout_s);

/* ---- blocking operations performed by one named thread ---- */

/**
 * @brief utc_conduit_write performed by local thread `thread` alone. Blocks (that thread).
 *
 * Other threads of the task that call it return UTC_OK at once and do nothing.
 * @param conduit the conduit
 * @param thread local thread id, 0 .. local thread count - 1
 * @param buf     the data (may be NULL when size is 0)
 * @param size    bytes to send
 * @param tag     0 .. UTC_CONDUIT_TAG_MAX
 * @return as utc_conduit_write, plus UTC_ERR_OUT_OF_RANGE for a bad thread id.
 */
utc_status_t utc_conduit_write_by(utc_conduit_t *conduit, int thread, const void *buf,
                                  size_t size, int tag);

/**
 * @brief utc_conduit_read performed by local thread `thread` alone. Blocks (that thread).
 *
 * Other threads of the task that call it return UTC_OK at once, do nothing and set
 * `*received` to 0.
 * @return as utc_conduit_read, plus UTC_ERR_OUT_OF_RANGE for a bad thread id.
 */
utc_status_t utc_conduit_read_by(utc_conduit_t *conduit, int thread, void *buf,
                                 size_t capacity, int tag, size_t *received);

/**
 * @brief utc_conduit_read_timeout performed by local thread `thread` alone. Blocks (that
 * thread) at most about `timeout_s` seconds.
 *
 * Other threads of the task that call it return UTC_OK at once, do nothing and set
 * `*received` to 0.
 * @param conduit  the conduit
 * @param thread   local thread id, 0 .. local thread count - 1
 * @param buf      where to put the data (may be NULL when capacity is 0)
 * @param capacity bytes available at buf
 * @param tag      0 .. UTC_CONDUIT_TAG_MAX
 * @param[out] received the message's size (may be NULL)
 * @param timeout_s seconds to wait; < 0 waits forever, 0 only checks what has arrived;
 *                  NaN is refused
 * @return as utc_conduit_read_timeout, plus UTC_ERR_OUT_OF_RANGE for a bad thread id.
 */
utc_status_t utc_conduit_read_timeout_by(utc_conduit_t *conduit, int thread, void *buf,
                                         size_t capacity, int tag, size_t *received,
                                         double timeout_s);

/* ---- asynchronous operations ---- */

/**
 * @brief Start a write; returns at once with a request. Called by one thread of the task.
 *
 * `buf` must stay valid and unchanged until the request completes (utc_request_wait, or
 * utc_request_test reporting done). Writes with the same tag keep their issue order.
 * @param conduit the conduit
 * @param buf     the data (may be NULL when size is 0)
 * @param size    bytes to send
 * @param tag     0 .. UTC_CONDUIT_TAG_MAX
 * @param[out] req the request, set only on success
 * @return as utc_conduit_write (errors found at once).
 */
utc_status_t utc_conduit_iwrite(utc_conduit_t *conduit, const void *buf, size_t size, int tag,
                                utc_request_t **req) __attribute__((warn_unused_result));

/**
 * @brief Start a read; returns at once with a request. Called by one thread of the task.
 *
 * Reads of the same tag are matched to messages in the order they were started.
 * `buf` must stay valid until the request completes.
 * @param conduit  the conduit
 * @param buf      where to put the data (may be NULL when capacity is 0)
 * @param capacity bytes available at buf
 * @param tag      0 .. UTC_CONDUIT_TAG_MAX
 * @param[out] req the request, set only on success
 * @return as utc_conduit_read (errors found at once; truncation is reported at completion).
 */
utc_status_t utc_conduit_iread(utc_conduit_t *conduit, void *buf, size_t capacity, int tag,
                               utc_request_t **req) __attribute__((warn_unused_result));

/**
 * @brief Check a request without blocking, and make progress on it.
 *
 * When it is complete, frees it, sets `*req` to NULL and `*done` to 1, and returns the
 * operation's status (a read's received size goes to `*received`, also on
 * UTC_ERR_TRUNCATE). Otherwise sets `*done` to 0 and returns UTC_OK. One thread at a time
 * may test or wait on a given request: while one does, another gets UTC_ERR_STATE (and may
 * try again); once it has completed, UTC_ERR_INVALID_HANDLE.
 * @param[in,out] req  the request
 * @param[out] done    1 when complete
 * @param[out] received for reads: the message's size (may be NULL)
 * @return UTC_OK; the operation's error; UTC_ERR_INVALID_ARG for a NULL request or a pointer
 *         that is not a request; UTC_ERR_INVALID_HANDLE for a stale handle (a copy kept
 *         after its request completed); UTC_ERR_STATE while another thread tests or waits
 *         on it.
 */
utc_status_t utc_request_test(utc_request_t **req, int *done, size_t *received);

/**
 * @brief Wait for a request to complete (blocks, sleeping after a short spin), free it and
 * set `*req` to NULL.
 * @param[in,out] req  the request
 * @param[out] received for reads: the message's size (may be NULL)
 * @return the operation's status; UTC_ERR_INVALID_ARG for a NULL request or a pointer that
 *         is not a request; UTC_ERR_INVALID_HANDLE for a stale handle (its request completed
 *         already); UTC_ERR_STATE while another thread tests or waits on the same request
 *         (one of them completes it; see utc_request_test).
 */
utc_status_t utc_request_wait(utc_request_t **req, size_t *received);

/**
 * @brief Ask for a request to be canceled. Does not block and does not free it: test or
 * wait for it as usual.
 *
 * A read that no message has reached yet is withdrawn: its wait returns UTC_ERR_CANCELED,
 * and the next message of its tag goes to the next read. A read that already has its
 * message, and a write, complete as they would have (a write cannot be called back once
 * it has started). One thread at a time may cancel, test or wait on a given request.
 * @param[in] req the request (not changed)
 * @return UTC_OK; UTC_ERR_INVALID_ARG for a NULL or bad request; UTC_ERR_INVALID_HANDLE
 *         (stale); UTC_ERR_STATE (another thread is on it); UTC_ERR_NOT_INITIALIZED.
 */
utc_status_t utc_request_cancel(utc_request_t **req);

/* ---- sets of requests (as MPI_Waitall, Waitany, Testall, Testany) ----
 *
 * NULL entries are skipped (MPI_REQUEST_NULL); a request may be in a set once. A request
 * that completes is freed and its entry set to NULL, as with utc_request_wait. An entry
 * that is refused (not a request, stale, another thread on it) counts as completed with
 * that error and is set to NULL, so no set waits for ever. The sets block as the single
 * calls do (sleeping after a short spin) and progress every pending request while they
 * wait. */

/**
 * @brief Wait for every request of the set.
 * @param count    entries in reqs (>= 0)
 * @param reqs     the requests; each becomes NULL
 * @param statuses per entry, its status (may be NULL; entries that were NULL untouched)
 * @param received per entry, a read's message size (may be NULL)
 * @return UTC_OK when every one succeeded, else the first failing entry's status (the
 *         message names its index); UTC_ERR_INVALID_ARG (negative count, NULL array, the
 *         same request twice).
 */
utc_status_t utc_request_waitall(int count, utc_request_t **reqs, utc_status_t *statuses,
                                 size_t *received);

/**
 * @brief Wait until one request of the set completes. Successive calls start looking at
 * successive entries, so a request that is always ready does not starve the others.
 * @param count     entries in reqs (>= 0)
 * @param reqs      the requests; the one that completes becomes NULL
 * @param[out] index the entry that completed, or -1 when every entry is NULL (then UTC_OK)
 * @param[out] received a read's message size (may be NULL)
 * @return that request's status; UTC_ERR_INVALID_ARG as utc_request_waitall.
 */
utc_status_t utc_request_waitany(int count, utc_request_t **reqs, int *index, size_t *received);

/**
 * @brief Test every request of the set once, completing those that are done.
 * @param count     entries in reqs (>= 0)
 * @param reqs      the requests; those that complete become NULL
 * @param[out] done 1 when no request is left (every entry NULL)
 * @param statuses  per entry that completed, its status (may be NULL)
 * @param received  per entry that completed, a read's message size (may be NULL)
 * @return UTC_OK, or the first status of an entry that completed with an error.
 */
utc_status_t utc_request_testall(int count, utc_request_t **reqs, int *done,
                                 utc_status_t *statuses, size_t *received);

/**
 * @brief Test the set once, completing at most one request (the search starts one entry
 * further at each call, as utc_request_waitany).
 * @param count     entries in reqs (>= 0)
 * @param reqs      the requests; the one that completes becomes NULL
 * @param[out] index the entry that completed, or -1
 * @param[out] done 1 when one completed, or when every entry is NULL
 * @param[out] received a read's message size (may be NULL)
 * @return the completed request's status, or UTC_OK.
 */
utc_status_t utc_request_testany(int count, utc_request_t **reqs, int *index, int *done,
                                 size_t *received);

/* ---- ownership passing ---- */

/**
 * @brief Allocate a buffer that can be handed over with utc_conduit_write_owned.
 * 64-byte aligned. Thread-safe.
 * @return the buffer, or NULL when out of memory (size 0 gives a valid, empty buffer).
 */
void *utc_buf_alloc(size_t size);

/**
 * @brief Allocate an owned buffer (as utc_buf_alloc: handed over with
 * utc_conduit_write_owned, freed with utc_buf_free) in page-locked (pinned) host memory when
 * the library has GPU support and a usable device, so that a GPU copy from or to it runs at
 * full speed: a producer that hands items to an overlapped GPU pipeline reading them owned
 * (utc_gpu_pipeline_options_t.in_owned) lets the pipeline copy each item to the device
 * straight from its buffer, with no host copy. Freed buffers go back to a pool of pinned
 * memory (256 MiB at most), since pinning is slow. Without a GPU (or pinned memory), an
 * ordinary utc_buf_alloc buffer: utc_buf_is_pinned says which. 64-byte aligned.
 * Thread-safe.
 * @return the buffer, or NULL when out of memory.
 */
void *utc_buf_alloc_pinned(size_t size);

/**
 * @brief Whether `buf` is a live buffer from utc_buf_alloc_pinned in pinned memory (or one
 * read with utc_conduit_read_owned that was, in-process, such a buffer).
 * @return true or false (false for NULL, freed buffers, foreign pointers).
 */
bool utc_buf_is_pinned(const void *buf);

/**
 * @brief Free a buffer from utc_buf_alloc or utc_conduit_read_owned. NULL is ignored.
 * A pointer that is not such a buffer, or one freed already, is logged and ignored: a
 * freed buffer's address is not reused until it has left a quarantine (the last 1,024
 * frees, at most 64 MiB), so a second free cannot free a newer buffer, and a freed large
 * buffer (32 MiB and up) is made inaccessible there, so a stale access faults at once.
 */
void utc_buf_free(void *buf);

/**
 * @brief Hand a buffer to the other task. Called by every local thread of the task (local
 * thread 0 performs it).
 *
 * In-process the pointer itself crosses: constant time whatever the size, and the call
 * returns at once. Across ranks the data is sent and the reader gets a buffer of its own.
 * Either way the buffer is no longer the caller's once this returns UTC_OK (it is freed
 * or handed over); on an error it still is. Across ranks, blocks until MPI is done with it.
 * @param conduit the conduit
 * @param buf  from utc_buf_alloc (or a previous utc_conduit_read_owned)
 * @param size bytes of the message, at most the buffer's size
 * @param tag  0 .. UTC_CONDUIT_TAG_MAX
 * @return as utc_conduit_write, plus UTC_ERR_INVALID_ARG when buf is not from
 *         utc_buf_alloc or size exceeds it; UTC_ERR_INVALID_HANDLE when buf is no longer
 *         the caller's: handed over already by an earlier write (not yet read, or sent to
 *         another rank) or freed with utc_buf_free, on both transports alike.
 */
utc_status_t utc_conduit_write_owned(utc_conduit_t *conduit, void *buf, size_t size, int tag);

/**
 * @brief Read the next message with `tag` into a buffer the runtime allocates (or the very
 * buffer the writer handed over). Called by every local thread of the task; all get the
 * same buffer, which the caller frees once with utc_buf_free. Blocks until a message
 * arrives. Never truncates.
 * @param conduit   the conduit
 * @param tag       0 .. UTC_CONDUIT_TAG_MAX
 * @param[out] buf  the buffer, set only on success
 * @param[out] size the message's size (may be NULL)
 * @return as utc_conduit_read (no UTC_ERR_TRUNCATE).
 */
utc_status_t utc_conduit_read_owned(utc_conduit_t *conduit, int tag, void **buf, size_t *size);

/**
 * @brief utc_conduit_read_owned performed by local thread `thread` alone: the other threads
 * of the task may call it too and return UTC_OK at once with *buf set to NULL (as the other
 * _by forms). Blocks the reading thread until a message arrives. Never truncates.
 * @param conduit   the conduit
 * @param thread    the local thread that reads (0 .. the task's local threads - 1)
 * @param tag       0 .. UTC_CONDUIT_TAG_MAX
 * @param[out] buf  the buffer (the reading thread's, to free with utc_buf_free); NULL on
 *                  the other threads and on an error
 * @param[out] size the message's size (may be NULL)
 * @return as utc_conduit_read_owned, plus UTC_ERR_OUT_OF_RANGE (no such thread).
 */
utc_status_t utc_conduit_read_owned_by(utc_conduit_t *conduit, int thread, int tag, void **buf,
                                       size_t *size);

/* ---- free mode: naming the peer rank ---- */

/**
 * @brief Free mode: write to the other task's threads on world rank `peer`. Called by
 * every local thread of the calling task on this rank (local thread 0 sends). Blocks as
 * utc_conduit_write. The peer must call utc_conduit_read_from naming this rank.
 * @param conduit the conduit (created in free mode)
 * @param peer a world rank that holds threads of the other task (may be this rank)
 * @param buf  the data (may be NULL when size is 0)
 * @param size bytes to send
 * @param tag  0 .. UTC_CONDUIT_TAG_MAX
 * @return as utc_conduit_write, plus UTC_ERR_STATE (conduit in single-entry mode) and
 *         UTC_ERR_OUT_OF_RANGE (peer holds no thread of the other task).
 */
utc_status_t utc_conduit_write_to(utc_conduit_t *conduit, int peer, const void *buf, size_t size,
                                  int tag);

/**
 * @brief Free mode: read the next message with `tag` written by the other task's threads
 * on world rank `peer`. Called by every local thread of the calling task on this rank.
 * Blocks as utc_conduit_read.
 * @return as utc_conduit_read, plus UTC_ERR_STATE and UTC_ERR_OUT_OF_RANGE as
 *         utc_conduit_write_to.
 */
utc_status_t utc_conduit_read_from(utc_conduit_t *conduit, int peer, void *buf, size_t capacity,
                                   int tag, size_t *received);

/**
 * @brief Free mode: utc_conduit_read_from with a time limit (as utc_conduit_read_timeout).
 * @param conduit   the conduit (created in free mode)
 * @param peer      the world rank whose message is read
 * @param buf       where to put the data
 * @param capacity  bytes available at buf
 * @param tag       0 .. UTC_CONDUIT_TAG_MAX
 * @param[out] received the message's size (may be NULL)
 * @param timeout_s seconds (>= 0); negative: no limit; NaN is refused
 * @return as utc_conduit_read_from, plus UTC_ERR_TIMEOUT (nothing lost: a later read gets
 *         the message) and UTC_ERR_INVALID_ARG for a NaN timeout.
 */
utc_status_t utc_conduit_read_from_timeout(utc_conduit_t *conduit, int peer, void *buf,
                                           size_t capacity, int tag, size_t *received,
                                           double timeout_s);

/**
 * @brief Free mode: utc_conduit_write_to performed by local thread `thread` alone. Blocks
 * (that thread) as utc_conduit_write.
 *
 * Other threads of the task that call it return UTC_OK at once and do nothing.
 * @param conduit the conduit (created in free mode)
 * @param thread  local thread id, 0 .. local thread count - 1
 * @param peer    a world rank that holds threads of the other task (may be this rank)
 * @param buf     the data (may be NULL when size is 0)
 * @param size    bytes to send
 * @param tag     0 .. UTC_CONDUIT_TAG_MAX
 * @return as utc_conduit_write_to (UTC_ERR_OUT_OF_RANGE also for a bad thread id).
 */
utc_status_t utc_conduit_write_to_by(utc_conduit_t *conduit, int thread, int peer,
                                     const void *buf, size_t size, int tag);

/**
 * @brief Free mode: utc_conduit_read_from performed by local thread `thread` alone. Blocks
 * (that thread) as utc_conduit_read.
 *
 * Other threads of the task that call it return UTC_OK at once, do nothing and set
 * `*received` to 0.
 * @param conduit  the conduit (created in free mode)
 * @param thread   local thread id, 0 .. local thread count - 1
 * @param peer     the world rank whose message is read
 * @param buf      where to put the data (may be NULL when capacity is 0)
 * @param capacity bytes available at buf
 * @param tag      0 .. UTC_CONDUIT_TAG_MAX
 * @param[out] received the message's size (may be NULL)
 * @return as utc_conduit_read_from (UTC_ERR_OUT_OF_RANGE also for a bad thread id).
 */
utc_status_t utc_conduit_read_from_by(utc_conduit_t *conduit, int thread, int peer, void *buf,
                                      size_t capacity, int tag, size_t *received);

/**
 * @brief Free mode: utc_conduit_read_from_timeout performed by local thread `thread`
 * alone. Blocks (that thread) at most about `timeout_s` seconds.
 *
 * Other threads of the task that call it return UTC_OK at once, do nothing and set
 * `*received` to 0.
 * @param conduit   the conduit (created in free mode)
 * @param thread    local thread id, 0 .. local thread count - 1
 * @param peer      the world rank whose message is read
 * @param buf       where to put the data (may be NULL when capacity is 0)
 * @param capacity  bytes available at buf
 * @param tag       0 .. UTC_CONDUIT_TAG_MAX
 * @param[out] received the message's size (may be NULL)
 * @param timeout_s seconds (>= 0); negative: no limit; NaN is refused
 * @return as utc_conduit_read_from_timeout (UTC_ERR_OUT_OF_RANGE also for a bad thread id).
 */
utc_status_t utc_conduit_read_from_timeout_by(utc_conduit_t *conduit, int thread, int peer,
                                              void *buf, size_t capacity, int tag,
                                              size_t *received, double timeout_s);

/**
 * @brief Free mode: utc_conduit_read_owned of the messages written by the other task's
 * threads on world rank `peer`: the next message with `tag` from there, in a buffer the
 * runtime allocates (or the very buffer the writer handed over with
 * utc_conduit_write_owned, in-process). Called by every local thread of the calling task
 * on this rank; all get the same buffer, which the caller frees once with utc_buf_free.
 * Blocks until a message arrives. Never truncates.
 * @param conduit   the conduit (created in free mode)
 * @param peer      the world rank whose message is read
 * @param tag       0 .. UTC_CONDUIT_TAG_MAX
 * @param[out] buf  the buffer, set only on success
 * @param[out] size the message's size (may be NULL)
 * @return as utc_conduit_read_from (no UTC_ERR_TRUNCATE); UTC_ERR_INVALID_ARG when buf is
 *         NULL.
 */
utc_status_t utc_conduit_read_owned_from(utc_conduit_t *conduit, int peer, int tag, void **buf,
                                         size_t *size);

/**
 * @brief Free mode: start a write to world rank `peer` (as utc_conduit_iwrite: one thread
 * calls; `buf` stays valid until the request completes).
 * @return as utc_conduit_iwrite, plus UTC_ERR_STATE and UTC_ERR_OUT_OF_RANGE as
 *         utc_conduit_write_to.
 */
utc_status_t utc_conduit_iwrite_to(utc_conduit_t *conduit, int peer, const void *buf, size_t size,
                                   int tag, utc_request_t **req)
    __attribute__((warn_unused_result));

/**
 * @brief Free mode: start a read of a message from world rank `peer` (as utc_conduit_iread).
 * @return as utc_conduit_iread, plus UTC_ERR_STATE and UTC_ERR_OUT_OF_RANGE.
 */
utc_status_t utc_conduit_iread_from(utc_conduit_t *conduit, int peer, void *buf, size_t capacity,
                                    int tag, utc_request_t **req)
    __attribute__((warn_unused_result));

/**
 * @brief Free mode: write `sbuf` to rank `dest` and read a message from rank `source`, as
 * MPI_Sendrecv: the read is started first, so two ranks exchanging with each other (the
 * symmetric swap) never wait for each other, whatever the size. Called by one thread
 * (like the asynchronous forms); blocks until both are done.
 * @return UTC_OK; the write's error if it failed (the read is then canceled or completed),
 *         else the read's (UTC_ERR_TRUNCATE with *received set); UTC_ERR_INVALID_ARG when
 *         the buffers overlap; the errors of utc_conduit_iwrite_to / iread_from.
 */
utc_status_t utc_conduit_sendrecv(utc_conduit_t *conduit, int dest, const void *sbuf,
                                  size_t ssize, int stag, int source, void *rbuf,
                                  size_t rcapacity, int rtag, size_t *received);

/* ---- end of stream ---- */

/**
 * @brief End this rank's writing on the conduit: after the messages the calling task's
 * threads on this rank wrote, reads at the other end that find nothing left (of their tag,
 * or of any tag) return UTC_ERR_CLOSED instead of waiting, and so do probes. Called as
 * utc_conduit_write (every local thread; in single-entry mode on the entry rank; in free
 * mode on each writing rank, for its messages to every rank of the other task). Later
 * writes from here return UTC_ERR_CLOSED, nothing sent. The other direction is not
 * affected. Start every asynchronous write before closing.
 * @param conduit the conduit
 * @return UTC_OK; UTC_ERR_STATE (closed already); the errors of utc_conduit_write.
 */
utc_status_t utc_conduit_close(utc_conduit_t *conduit);

/* ---- probes and any-tag reads ---- */

/**
 * @brief Wait for the next message with `tag` (or UTC_ANY_TAG) and say its size and tag,
 * without taking it: the next read of that tag gets it. A probe is no transfer: any
 * thread of the reading task may call one, alone (each call looks for itself). A message
 * that reads of its tag started earlier wait for is theirs, not the probe's. Messages of
 * each tag keep their write order.
 * @param conduit the conduit
 * @param tag     0 .. UTC_CONDUIT_TAG_MAX, or UTC_ANY_TAG
 * @param[out] info size, tag and rank of the message
 * @return UTC_OK; UTC_ERR_INVALID_HANDLE (not a live conduit: destroyed, or never
 *         created); UTC_ERR_INVALID_ARG (bad tag, info NULL); UTC_ERR_NOT_MEMBER;
 *         UTC_ERR_PEER_FAILED / UTC_ERR_CANCELED as utc_conduit_read.
 */
utc_status_t utc_conduit_probe(utc_conduit_t *conduit, int tag, utc_msg_info_t *info);

/**
 * @brief utc_conduit_probe without waiting: *found is 1 and `info` filled when a message
 * is there, else 0.
 * @param conduit the conduit
 * @param tag     0 .. UTC_CONDUIT_TAG_MAX, or UTC_ANY_TAG
 * @param[out] found 1 or 0
 * @param[out] info  size, tag and rank of the message, when found
 * @return as utc_conduit_probe.
 */
utc_status_t utc_conduit_iprobe(utc_conduit_t *conduit, int tag, int *found,
                                utc_msg_info_t *info);

/**
 * @brief Free mode: utc_conduit_probe of the messages from world rank `peer`.
 * @param conduit the conduit (created in free mode)
 * @param peer    a world rank that holds threads of the other task
 * @param tag     0 .. UTC_CONDUIT_TAG_MAX, or UTC_ANY_TAG
 * @param[out] info size, tag and rank of the message
 * @return as utc_conduit_probe, plus UTC_ERR_STATE and UTC_ERR_OUT_OF_RANGE as
 *         utc_conduit_read_from.
 */
utc_status_t utc_conduit_probe_from(utc_conduit_t *conduit, int peer, int tag,
                                    utc_msg_info_t *info);

/**
 * @brief Free mode: utc_conduit_iprobe of the messages from world rank `peer`.
 * @param conduit the conduit (created in free mode)
 * @param peer    a world rank that holds threads of the other task
 * @param tag     0 .. UTC_CONDUIT_TAG_MAX, or UTC_ANY_TAG
 * @param[out] found 1 or 0
 * @param[out] info  size, tag and rank of the message, when found
 * @return as utc_conduit_probe_from.
 */
utc_status_t utc_conduit_iprobe_from(utc_conduit_t *conduit, int peer, int tag, int *found,
                                     utc_msg_info_t *info);

/**
 * @brief Read the next message of any tag, and say which: as utc_conduit_read with
 * UTC_ANY_TAG, filling `info`. A message that reads of its tag started earlier wait for
 * is theirs. Messages of each tag keep their write order.
 * @param conduit  the conduit
 * @param buf      where to put the data
 * @param capacity bytes available at buf
 * @param[out] info size, tag and rank of the message (also on UTC_ERR_TRUNCATE, when the
 *                  message stays queued for the next read of its tag)
 * @return as utc_conduit_read.
 */
utc_status_t utc_conduit_read_any(utc_conduit_t *conduit, void *buf, size_t capacity,
                                  utc_msg_info_t *info);

/**
 * @brief Free mode: utc_conduit_read_any of the messages from world rank `peer`.
 * @param conduit  the conduit (created in free mode)
 * @param peer     the world rank whose message is read
 * @param buf      where to put the data
 * @param capacity bytes available at buf
 * @param[out] info size, tag and rank of the message
 * @return as utc_conduit_read_from.
 */
utc_status_t utc_conduit_read_any_from(utc_conduit_t *conduit, int peer, void *buf,
                                       size_t capacity, utc_msg_info_t *info);

/* ---- shared conduits ---- */

/** How a shared conduit hands out its writers' messages. */
typedef enum utc_shared_mode {
    /** Every message any writer writes reaches every reader. */
    UTC_SHARED_PUBLISH = 1,
    /** Each message reaches exactly one reader: one that asked for it (work sharing, demand
     * driven: a reader asks as it reads, up to its credit window ahead, so a slow reader
     * takes fewer). */
    UTC_SHARED_SHARE = 2
} utc_shared_mode_t;

/**
 * @brief Create a shared conduit: a set of writer tasks joined to a set of reader tasks.
 *
 * Collective over all ranks, in the same order with the same arguments (as
 * utc_conduit_create). The result is a utc_conduit_t and takes the same calls, by role:
 * writers write (utc_conduit_write, _by, _owned, iwrite, utc_conduit_close), readers read
 * (utc_conduit_read, _timeout, _by, _owned, iread; in publish mode also read_any and the
 * probes). Each task transfers on its entry rank (single-entry mode; the _to / _from forms
 * are refused). For each writer and tag, a reader gets that writer's messages in write
 * order; messages of different writers interleave as they come.
 * - publish: every reader gets every message.
 * - share: each message goes to one reader. A read of a tag tops up the reader's asks of
 *   each writer to its credit window (opts->credits, default 2) beyond the reads it has in
 *   flight; a writer's write waits for an ask and hands its message to that reader. So a
 *   reader's next messages are on their way while it works, it holds at most `credits`
 *   messages per writer that it has not read yet, and a slow reader takes fewer. Messages
 *   handed to a reader are that reader's: one that stops reading a tag before its end of
 *   stream leaves up to credits - 1 of them unread (the destroy drops them and says so in
 *   the log): read until UTC_ERR_CLOSED, or use credits 1.
 * End of stream: once every writer has called utc_conduit_close and every message to a
 * reader is read, that reader's reads return UTC_ERR_CLOSED.
 * A member whose run fails, or that is destroyed, fails the whole conduit: every
 * operation on it ends (UTC_ERR_PEER_FAILED / UTC_ERR_CANCELED) on every rank, messages
 * handed to readers and not yet read stay unread (none goes to a second reader), and the
 * conduit stays failed: make a new one for the work left.
 * Members on one rank exchange through in-process rings, members on different ranks
 * through the transport between their ranks (the node's shared memory on one host, MPI
 * across hosts or with UTC_TRANSPORT=mpi); a group may mix them.
 * @param writers  the writer tasks
 * @param nwriters how many (>= 1)
 * @param readers  the reader tasks
 * @param nreaders how many (>= 1)
 * @param mode     UTC_SHARED_PUBLISH or UTC_SHARED_SHARE
 * @param opts     options (single-entry mode only; credits in share mode only), or NULL
 *                 for UTC_CONDUIT_OPTIONS_INIT
 * @param[out] out the conduit, set only on success
 * @return UTC_OK; UTC_ERR_NOT_INITIALIZED; UTC_ERR_INVALID_ARG (NULL argument, empty set,
 *         a task listed twice or in both sets, unknown mode, free mode, bad option,
 *         credits outside 0 .. UTC_CONDUIT_CREDITS_MAX or set in publish mode, a bad
 *         UTC_SHARE_CREDITS, a bad transport option or UTC_TRANSPORT);
 *         UTC_ERR_INVALID_HANDLE (a task is not live); UTC_ERR_MISMATCH (ranks passed
 *         different arguments); UTC_ERR_NO_MEMORY; UTC_ERR_MPI.
 */
utc_status_t utc_conduit_create_shared(utc_task_t *const *writers, int nwriters,
                                       utc_task_t *const *readers, int nreaders,
                                       utc_shared_mode_t mode,
                                       const utc_conduit_options_t *opts, utc_conduit_t **out);

#ifdef __cplusplus
}
#endif
#endif /* UTC_CONDUIT_H */
