"""File helpers shared by every stage: atomic writes, JSONL with line-numbered errors, typed readers
that set bad rows aside with their reason, and the one SHA-256 helper (content, checksums, cache keys).

Every text writer here (:func:`write_text`, :func:`write_json`, :func:`write_jsonl`, :func:`append_jsonl`,
:func:`append_jsonl_rows`) passes its text through :func:`rwpost.secrets.redact`: no secret the process
knows reaches a file, whatever a server echoed into an error message."""

from __future__ import annotations

import errno
import fcntl
import gzip
import hashlib
import json
import os
import re
import signal
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from rwpost.errors import ConfigError, RecordError, RwpostError
from rwpost.records import Reject
from rwpost.secrets import redact, redactor

M = TypeVar("M", bound=BaseModel)


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return _resolved(a) == _resolved(b)


def check_output(
    out: str | os.PathLike[str],
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    *,
    overwrite: bool = False,
) -> Path:
    """Refuse an output path that is one of ``inputs`` (symlinks and hard links included) or, unless
    ``overwrite``, one that already exists: a command never replaces a file without being asked."""
    target = Path(out)
    for given in inputs:
        if given is not None and _same_file(target, Path(given)):
            raise ConfigError(f"{target}: is also an input of this command; write the output elsewhere")
    if (target.exists() or target.is_symlink()) and not overwrite:
        raise ConfigError(f"{target}: already exists (pass --overwrite to replace it)")
    return target


def overlap(out: str | os.PathLike[str], given: str | os.PathLike[str]) -> str | None:
    """How an output path meets an input path: ``"is also"`` (the same file, symlinks and hard links
    included), ``"is inside"`` (under the input, a folder), ``"holds"`` (the input is under it), or None."""
    mine, theirs = Path(out), Path(given)
    if _same_file(mine, theirs):
        return "is also"
    mine, theirs = _resolved(mine), _resolved(theirs)
    if mine.is_relative_to(theirs):
        return "is inside"
    if theirs.is_relative_to(mine):
        return "holds"
    return None


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13): compare as given
        return path.absolute()


def check_outputs(
    outs: Iterable[str | os.PathLike[str]],
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    *,
    overwrite: bool = False,
) -> None:
    """:func:`check_output` for each file a command writes (a folder output: the files it puts there)."""
    given = list(inputs)
    for out in outs:
        check_output(out, given, overwrite=overwrite)


DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""Write errors that no retry fixes: no space, a quota, a file-size limit."""


def disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it, as :func:`_write_error` wraps it) is a write that failed for
    want of space: the run must stop, not go on failing every record."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, OSError) and exc.errno in DISK_FULL:
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


class FolderBusy(RwpostError):
    """Another live process holds the folder's lock (:func:`folder_lock`)."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _busy(folder: Path, path: Path, fd: int, doing: str, runs: str) -> FolderBusy:
    holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
    state = "" if not holder.isdigit() or _pid_alive(int(holder)) else " (exited; its child holds it)"
    return FolderBusy(
        f"{folder} is being {doing} by PID {holder}{state} (lock {path}): two {runs} cannot share one "
        "--out; wait for it or stop it"
    )


@contextmanager
def csv_field_limit(limit: int) -> Iterator[int]:
    """Let the csv module read fields of up to ``limit`` characters inside the block, then give the
    process-wide limit back (the csv module keeps one for the whole process); yields the limit it had."""
    import csv

    before = csv.field_size_limit()
    csv.field_size_limit(limit)
    try:
        yield before
    finally:
        csv.field_size_limit(before)


@contextmanager
def folder_lock(
    folder: str | os.PathLike[str], name: str, *, doing: str = "written", runs: str = "runs"
) -> Iterator[Path]:
    """Hold ``folder``'s lock: one writer per output folder (crawl, extract, evaluate), so two runs into
    one ``--out`` never pay each call twice nor write each record twice.

    The lock is ``fcntl.flock`` on ``folder/name``, a file naming the holder's PID. The kernel drops it
    when the holder dies, so the lock of a killed run is taken over; a live holder makes this raise
    :class:`FolderBusy` naming its PID (``{folder} is being {doing} by PID ...: two {runs} cannot share
    one --out``). The file is removed on release (and a folder this call created, when left empty).
    """
    folder = Path(folder)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)  # a file in the way: the CLI names it in one line
    path = folder / name
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise _write_error(path, exc) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            try:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise _write_error(path, exc) from exc
                raise _busy(folder, path, fd, doing, runs) from None
            finally:
                os.close(fd)
        try:  # the holder we waited for removed the file: lock the one at the path now
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        try:  # the holder's PID, for the refusal of a second run (a full disk leaves it empty)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError:
            pass
        yield path
    finally:
        try:  # removed while still held, so nobody locks a file that is about to go
            path.unlink(missing_ok=True)
            if created:
                folder.rmdir()  # only when empty: a run refused at once leaves no folder behind
        except OSError:
            pass
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _write_error(target: Path, exc: OSError) -> RwpostError:
    """An OS error while writing ``target``, named by the path the user gave (never the temp file)."""
    if isinstance(exc, IsADirectoryError) or target.is_dir():
        return ConfigError(f"{target}: is a directory, expected a file path")
    return RwpostError(f"{target}: cannot write ({exc.strerror or exc})")


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM (where Python handles them, in the main thread) until the block ends,
    then act on one that came: the few steps that create or remove a temporary file are never cut
    between the file existing and the path being known, nor between the cleanup's start and its end."""
    if threading.current_thread() is not threading.main_thread():
        yield  # Python runs signal handlers in the main thread only: nothing can interrupt this one
        return
    caught: list[int] = []
    previous = {}
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(signum)
            if callable(handler):  # SIG_DFL / SIG_IGN: the process dies (or ignores it) without Python
                previous[signum] = handler
                signal.signal(signum, lambda got, _frame: caught.append(got))
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if caught:
            previous[caught[0]](caught[0], None)


_SYNCED: ContextVar[bool] = ContextVar("rwpost_io_synced", default=True)


@contextmanager
def unsynced() -> Iterator[None]:
    """The writes of this block (in this thread or task) reach the disk when the kernel writes them back,
    without an fsync each: for files that nothing trusts until it has checked them against SHA-256s
    written after them. A shard's outputs are such files: its completion marker holds their hashes and a
    shard whose files do not match is done again (:class:`rwpost.executors.ShardStore`). A kill loses none
    of the writes (the kernel holds them); a machine crash can, and then costs a rerun of the shard, never
    a wrong merge. The stage's own outputs, merged from the shards, are written and fsynced as always."""
    token = _SYNCED.set(False)
    try:
        yield
    finally:
        _SYNCED.reset(token)


def _fsync(fd: int) -> None:
    """fsync ``fd``, except inside :func:`unsynced`."""
    if _SYNCED.get():
        os.fsync(fd)


def _temp_name(target: Path) -> Path:
    """A new temporary file's path beside ``target``: hidden, named after it and this process."""
    return target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one rename.

    The temporary file cannot outlive the block, whatever stops it: its path is chosen before the file
    is created, and a SIGINT or SIGTERM (a ``KeyboardInterrupt``, :func:`rwpost.errors.sigterm_interrupts`)
    waits while the file is created and while it is removed, so no signal lands between the two."""
    target = Path(path)
    if target.is_dir():
        raise ConfigError(f"{target}: is a directory, expected a file path")
    tmp_path: Path | None = None
    try:
        with _signals_deferred():
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                for _attempt in range(100):
                    tmp_path = _temp_name(target)
                    try:  # mkstemp's flags and mode: only this process can open it until it is renamed
                        fd = os.open(tmp_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
                        break
                    except FileExistsError:
                        continue
                else:
                    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(tmp_path))
                os.close(fd)
            except OSError as exc:
                raise _write_error(target, exc) from exc
        os.chmod(tmp_path, 0o666 & ~_umask())  # outputs get the usual mode
        try:
            yield tmp_path
        except OSError as exc:
            if exc.filename not in (None, str(tmp_path)):
                raise  # not about the file being written
            raise _write_error(target, exc) from exc
        try:
            os.replace(tmp_path, target)
        except OSError as exc:
            raise _write_error(target, exc) from exc
    finally:
        with _signals_deferred():
            if tmp_path is not None:
                try:
                    os.unlink(tmp_path)
                except FileNotFoundError:
                    pass  # renamed into place, or never created


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[BinaryIO | Any]:
    """Open a file for writing that appears at ``path`` only when the block ends without error."""
    with atomic_path(path) as tmp:
        encoding = None if "b" in mode else "utf-8"
        with open(tmp, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            _fsync(handle.fileno())


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write bytes atomically."""
    with atomic_open(path, "wb") as handle:
        handle.write(data)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 text atomically (secrets redacted)."""
    with atomic_open(path, "w") as handle:
        handle.write(redact(text))


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write pretty, key-sorted JSON atomically (stable diffs for DVC metrics)."""
    write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n")


def _to_jsonable(row: BaseModel | dict[str, Any]) -> dict[str, Any]:
    return row.model_dump(mode="json") if isinstance(row, BaseModel) else row


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[BaseModel | dict[str, Any]]) -> int:
    """Write records as JSON lines atomically (secrets redacted); returns the number written."""
    count = 0
    clean = redactor()
    with atomic_open(path, "w") as handle:
        for row in rows:
            handle.write(clean(json.dumps(_to_jsonable(row), ensure_ascii=False)) + "\n")
            count += 1
    return count


def append_jsonl(path: str | os.PathLike[str], row: BaseModel | dict[str, Any], *, sync: bool = True) -> None:
    """Append one record and flush it to disk (for resumable stages: a line is either whole or absent);
    ``sync=False``: see :func:`append_jsonl_rows`."""
    append_jsonl_rows(path, [row], sync=sync)


def append_jsonl_rows(
    path: str | os.PathLike[str], rows: Iterable[BaseModel | dict[str, Any]], *, sync: bool = True
) -> None:
    """Append records as JSON lines (secrets redacted) with one write and one fsync: a kill leaves at most
    the last line cut short, which :func:`drop_torn_tail` removes before the next append.

    ``sync=False`` leaves out the fsync: the lines are the kernel's once this returns, so a killed or
    interrupted process loses none of them, and they reach the disk at the writer's commit (:func:`sync_file`
    at the end of its batch or shard, before anything marks it done); only a machine crash before that
    loses them, and the unmarked work is then done again."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    clean = redactor()
    data = "".join(clean(json.dumps(_to_jsonable(row), ensure_ascii=False)) + "\n" for row in rows).encode()
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as exc:
        raise _write_error(target, exc) from exc
    try:
        size = os.fstat(fd).st_size
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            _fsync(fd)
    except OSError as exc:  # a full disk: nothing half-written stays (truncating frees, so it works)
        try:
            os.ftruncate(fd, size)
        except OSError:
            pass  # the torn line is removed before the next append (drop_torn_tail)
        raise _write_error(target, exc) from exc
    finally:
        os.close(fd)


def sync_file(path: str | os.PathLike[str]) -> None:
    """Flush to disk what was appended to ``path`` without an fsync (``sync=False``): the commit of a batch
    or shard of appends. A file not there holds nothing to flush."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        _fsync(fd)
    finally:
        os.close(fd)


def drop_torn_tail(path: str | os.PathLike[str]) -> bool:
    """Remove a last line without a newline (the append a kill cut short) before a resumable writer
    appends again; returns whether one was removed. A whole last line is kept, parsable or not."""
    target = Path(path)
    if not target.exists():
        return False
    with open(target, "rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return False
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return False
        handle.seek(max(0, size - (1 << 20)))
        tail = handle.read()
        cut = tail.rfind(b"\n")
        keep = size - len(tail) + cut + 1 if cut >= 0 else 0
        if cut < 0 and size > len(tail):  # a torn line longer than 1 MiB: find its start the slow way
            handle.seek(0)
            keep = handle.read().rfind(b"\n") + 1
        handle.truncate(keep)
        handle.flush()
        _fsync(handle.fileno())
    return True


def drop_jsonl_rows(path: str | os.PathLike[str], drop: Callable[[Any], bool]) -> int:
    """Rewrite a JSONL file (atomically, other lines kept byte for byte) without the rows ``drop`` picks;
    returns how many went. A line that does not parse is kept (its reader names it)."""
    target = Path(path)
    if not target.exists():
        return 0
    drop_torn_tail(target)
    kept, dropped = [], 0
    for _, raw in iter_lines(target):
        try:
            row = json.loads(raw) if raw.strip() else None
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            row = None
        if row is not None and drop(row):
            dropped += 1
        else:
            kept.append(raw)
    if dropped:
        write_bytes(target, b"".join(kept))
    return dropped


def input_error(path: str | os.PathLike[str], exc: OSError) -> RecordError:
    """An OS error opening an input file as one line naming the file (missing, a folder, unreadable)."""
    if isinstance(exc, FileNotFoundError):
        problem = "file not found"
    elif isinstance(exc, IsADirectoryError):
        problem = "is a directory, expected a file"
    elif isinstance(exc, PermissionError):
        problem = "permission denied"
    else:
        problem = f"cannot read ({exc.strerror or exc})"
    return RecordError(problem, source=str(path))


MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line rwpost reads (a JSONL record with inline image bytes fits many times over)."""

MAX_TEXT_BYTES = 256 * 1024 * 1024
"""The largest file read whole as text or JSON (predictions, params, price tables, id maps)."""

MAX_PAGE_BYTES = 32 * 1024 * 1024
"""The largest page read (a saved or stored ``.html``/``.html.gz``, decompressed); the crawler downloads
at most 5 MiB a page."""


class TooLarge(ValueError):
    """An input larger than the bound rwpost reads it to (a gzip bomb, a device, a runaway file)."""


def _refuse_device(path: str | os.PathLike[str]) -> None:
    """A RecordError for a device (``/dev/zero`` never ends) or a named pipe in a folder (opening one no
    process writes to waits for ever); a shell's ``<(...)`` (``/dev/fd/N``, a pipe with a writer) is read."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # opening it names the problem
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise RecordError("is a device, expected a file", source=str(path))
    if stat.S_ISFIFO(mode) and not str(path).startswith(("/dev/fd/", "/proc/self/fd/", "/dev/stdin")):
        raise RecordError("is a named pipe (FIFO), expected a file", source=str(path))


def read_bounded(path: str | os.PathLike[str], limit: int, *, gunzip: bool = False) -> bytes:
    """At most ``limit`` bytes of a file (with ``gunzip``, decompressed as it is read), never more in
    memory: a file with more raises :class:`TooLarge`. OS and gzip errors (``OSError``, ``EOFError``,
    ``zlib.error``) pass through for the caller to name."""
    _refuse_device(path)
    with gzip.open(path, "rb") if gunzip else open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"larger than {limit} bytes{' once decompressed' if gunzip else ''}")
    return data


def iter_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw bytes)`` per line of a file; a missing or unreadable file, a device or a
    line over :data:`MAX_LINE_BYTES` is a :class:`RecordError` naming it. Decode each with
    :func:`decode_line`."""
    _refuse_device(path)
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise input_error(path, exc) from exc
    with handle:
        try:
            for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), start=1):
                if len(raw) > MAX_LINE_BYTES:
                    raise RecordError(
                        f"line longer than {MAX_LINE_BYTES} bytes", source=str(path), line=number
                    )
                yield number, raw
        except OSError as exc:
            raise input_error(path, exc) from exc


def decode_line(raw: bytes, source: str, line: int) -> str:
    """One line as UTF-8 text (a leading byte-order mark dropped); bad bytes name file, line and column."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
        raise RecordError(problem, source=source, line=line) from exc
    return text[1:] if line == 1 and text.startswith("\ufeff") else text


_DECODER = json.JSONDecoder()
_NESTING = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[{\]}\n]')
"""What moves a JSON text's nesting depth or line: a string (skipped whole), a bracket, a newline."""


def _deepest_line(text: str, start: int = 0) -> int:
    """The line of ``text`` where the JSON value from ``start`` first reaches its deepest nesting (where
    a recursive decoder gives up)."""
    line = best_line = text.count("\n", 0, start) + 1
    depth = best = 0
    for match in _NESTING.finditer(text, start):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in "[{":
            depth += 1
            if depth > best:
                best, best_line = depth, line
        elif token in "]}":
            depth -= 1
            if depth <= 0:
                break
    return best_line


def decode_json(text: str, source: str, *, line: int | None = None, at: int | None = None) -> Any:
    """The one parser of JSON text read from a file: the value of ``text`` (``at``: the value starting at
    that offset, returned with the offset after it, as ``raw_decode`` does). Text that is not JSON, or
    nested too deeply to decode (``[`` x 100000: a ``RecursionError``), is a :class:`RecordError` naming
    ``source`` and the line: ``line`` where the text is one line of the file (JSONL, a CSV cell), else
    the line in ``text`` where the problem is."""
    try:
        return json.loads(text) if at is None else _DECODER.raw_decode(text, at)
    except json.JSONDecodeError as exc:
        problem = f"not valid JSON ({exc.msg} at column {exc.colno})"
        raise RecordError(problem, source=source, line=line or exc.lineno) from exc
    except RecursionError as exc:
        where = line or _deepest_line(text, at or 0)
        raise RecordError("JSON nested too deeply", source=source, line=where) from exc


def parse_json_line(text: str, source: str, line: int) -> Any:
    """One JSON value of a JSONL line; a bad line raises :class:`RecordError` with its file and line."""
    return decode_json(text, source, line=line)


def read_text(path: str | os.PathLike[str]) -> str:
    """A whole file as UTF-8 text (a byte-order mark dropped); a missing or unreadable file, or bytes that
    are not UTF-8, are one :class:`RecordError` naming the file (and the line)."""
    source = str(path)
    try:
        raw = read_bounded(path, MAX_TEXT_BYTES)
    except OSError as exc:
        raise input_error(path, exc) from exc
    except TooLarge as exc:
        raise RecordError(str(exc), source=source) from exc
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise RecordError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x})", source=source, line=line) from exc


def read_json(path: str | os.PathLike[str], *, text: str | None = None) -> Any:
    """The JSON value of a whole file; a missing, unreadable or malformed file is one :class:`RecordError`.
    ``text``: the file's text (:func:`read_text`) when the caller has already read it."""
    return decode_json(read_text(path) if text is None else text, str(path))


def iter_jsonl(
    path: str | os.PathLike[str],
    *,
    on_error: Callable[[RecordError, bytes], None] | None = None,
    keep: Callable[[bytes], bool] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` per non-empty line; a bad line raises :class:`RecordError`.

    A last line without a newline that does not parse is treated as a write cut short by a kill and
    reported like any other bad line, so callers decide (skip with a reject, or stop). With ``on_error``
    a bad line (not UTF-8, not JSON) is handed to it with its raw bytes and reading goes on. ``keep(raw)``
    False skips a line before it is decoded.
    """
    source = str(path)
    for number, raw in iter_lines(path):
        if keep is not None and not keep(raw):
            continue
        try:
            text = decode_line(raw, source, number)
            if not text.strip():
                continue
            value = parse_json_line(text, source, number)
        except RecordError as exc:
            if on_error is None:
                raise
            on_error(exc, raw)
            continue
        yield number, value


def sha256_hex(data: bytes | str) -> str:
    """Hex SHA-256 of bytes, or of a string as UTF-8: content addresses of images and HTML, run
    identities and cache keys all use it (the project's one hash helper, with :func:`sha256_file`)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's content, read in 1 MiB chunks (dataset checksums, run identities)."""
    _refuse_device(path)
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def validation_problem(exc: ValidationError) -> tuple[str, str | None]:
    """``(message, dotted field)`` of the first problem pydantic found (one line, never the full dump)."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    return first.get("msg", "invalid"), where or None


def reject_data(row: Any) -> dict[str, Any] | str:
    """A row as a Reject keeps it: an object as it is, any other JSON value as its JSON text."""
    return row if isinstance(row, dict) else json.dumps(row, ensure_ascii=False)


def read_records(
    path: str | os.PathLike[str],
    model: type[M],
    *,
    rejects: list[Reject] | None = None,
    stage: str = "read",
    select: Callable[[str], bool] | None = None,
) -> Iterator[M]:
    """Validated ``model`` records of a JSONL file.

    A row that does not validate raises :class:`RecordError` naming the file, line, record id and field;
    when ``rejects`` is given it is set aside there instead, as a ``Reject`` of ``stage`` with its data.
    ``select(id)`` (``""`` for a row without a string id) keeps the rows it accepts; the others are not
    validated (a shard reads only its own records). A line that is not JSON has no id to select by: it is
    raised or set aside as without ``select``.
    """
    source = str(path)

    def bad_line(error: RecordError, raw: bytes) -> None:
        data = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        rejects.append(  # type: ignore[union-attr]
            Reject(stage=stage, reason=str(error), source=source, line=error.line, data=data)
        )

    def maybe(raw: bytes) -> bool:
        """False for a line ``select`` refuses, seen from its id read by orjson alone: the rows of other
        shards are not decoded. Any line orjson does not read as json does (its id no string, or not
        read at all: not JSON, a BOM, NaN) is decoded, and ``select`` decides on json's id below."""
        row = _read_as_json_reads(raw, ("id",))
        if row is None:
            return True
        rid = row.get("id") if isinstance(row, dict) else None
        return select(rid or "")  # type: ignore[misc]

    for line, row in iter_jsonl(
        path, on_error=None if rejects is None else bad_line, keep=maybe if select is not None else None
    ):
        if select is not None:
            rid = row.get("id") if isinstance(row, dict) else None
            if not select(rid if isinstance(rid, str) else ""):
                continue
        try:
            yield model.model_validate(row)
        except ValidationError as exc:
            message, where = validation_problem(exc)
            rid = row.get("id") if isinstance(row, dict) and isinstance(row.get("id"), str) else None
            error = RecordError(
                f"not a {model.__name__}: {message}", source=source, line=line, record_id=rid, field=where
            )
            if rejects is None:
                raise error from exc
            rejects.append(
                Reject(
                    id=rid, stage=stage, reason=str(error), source=source, line=line, data=reject_data(row)
                )
            )


def sorted_by_id(rows: Iterable[M]) -> list[M]:
    """Records in ``id`` order; a stable sort, so records of one id keep the order they were made in."""
    return sorted(rows, key=lambda row: str(getattr(row, "id", None) or ""))


def sorted_rejects(rejects: Iterable[Reject]) -> list[Reject]:
    """Rejects in a stable order (id, then where they came from): stage outputs never depend on the
    order records arrived in, so rebuilding the same inputs gives the same bytes."""
    return sorted(rejects, key=lambda r: (r.id or "", r.source or "", r.line or 0, r.reason))


def _read_as_json_reads(raw: bytes, fields: tuple[str, ...]) -> Any:
    """orjson's value of one line (about twice the standard library's speed) where it reads the line's
    string ``fields`` as json does: it accepts the line and each of ``fields`` is absent, null or a string.
    None where it does not (orjson refuses NaN, lone surrogates and a BOM, and reads integers past 64 bits
    as floats), and for the line ``null``: the caller then asks json."""
    try:
        row = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if isinstance(row, dict) and not all(isinstance(row.get(f), str | None) for f in fields):
        return None
    return row


def json_for_fields(raw: bytes, fields: tuple[str, ...]) -> Any:
    """The JSON value of one line, parsed to read its string ``fields`` (a record's id): orjson's where it
    reads them as json does (:func:`_read_as_json_reads`), else json's, so the fields' values are always
    json's. Raises what ``json.loads`` raises."""
    row = _read_as_json_reads(raw, fields)
    return row if row is not None else json.loads(raw)


def _keyed_lines(path: Path, fields: tuple[str, ...]) -> list[tuple[tuple[str, ...], bytes]] | None:
    """``(key, line)`` of each non-blank line of a JSONL file, every line ending in a newline; None when a
    line is not JSON (the caller leaves the file's order as it is)."""
    keyed = []
    for _number, raw in iter_lines(path):
        if not raw.strip():
            continue
        try:
            row = json_for_fields(raw, fields)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            return None
        values = tuple(str(row.get(f) or "") if isinstance(row, dict) else "" for f in fields)
        keyed.append((values, _ended(raw)))
    return keyed


def _ended(raw: bytes) -> bytes:
    """A line with its newline (a last line may have none)."""
    return raw if raw.endswith(b"\n") else raw + b"\n"


def _by_key(keyed: list[tuple[tuple[str, ...], bytes]]) -> list[tuple[tuple[str, ...], bytes]]:
    return sorted(keyed, key=lambda pair: pair[0])  # stable: lines of one key keep their order


def sort_jsonl_by_id(path: str | os.PathLike[str], fields: tuple[str, ...] = ("id",)) -> None:
    """Rewrite an append-only JSONL file (lines kept byte for byte) in ``fields`` order, atomically.

    Resumable stages append results as they complete; sorting once at the end makes the output the same
    bytes however the work was ordered or interrupted. Lines with equal keys keep their order (a later
    line of an id still wins for readers that keep the last). A file with a bad line is left as it is.
    """
    target = Path(path)
    if not target.exists():
        return
    keyed = _keyed_lines(target, fields)
    if keyed is None:
        return
    ordered = _by_key(keyed)
    if ordered != keyed:
        write_bytes(target, b"".join(raw for _key, raw in ordered))


def merge_jsonl_by_id(
    sources: Sequence[str | os.PathLike[str]],
    target: str | os.PathLike[str],
    fields: tuple[str, ...] = ("id",),
) -> int:
    """Write the lines of ``sources`` into ``target`` in ``fields`` order, atomically, in one write: the
    bytes :func:`sort_jsonl_by_id` leaves after the files are joined one after the other (lines of one key
    in source order; blank lines dropped; with a line that is not JSON, joined in source order alone).
    Returns the lines written."""
    keyed: list[tuple[tuple[str, ...], bytes]] = []
    in_order = True
    for source in sources:
        lines = _keyed_lines(Path(source), fields) if in_order else None
        if lines is None:  # a bad line: no order is kept, the files are joined as they are
            in_order = False
            lines = [((), _ended(raw)) for _number, raw in iter_lines(source) if raw.strip()]
        keyed.extend(lines)
    if in_order:
        keyed = _by_key(keyed)
    write_bytes(target, b"".join(raw for _key, raw in keyed))
    return len(keyed)
