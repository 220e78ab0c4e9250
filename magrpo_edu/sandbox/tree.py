"""Removing what a program left, whatever it made: `remove_tree(path)` (the trainer: a run's folder, a dead
trainer's leftovers) and `empty_folder(fd)` (also the harness, between two asserts: `TREE` is its source).

Iterative (a chain of 100,000 nested folders costs no recursion, and at most two file descriptors at a time),
never following a symlink (every folder is opened with O_NOFOLLOW relative to its parent's descriptor, so
a symlink planted at a path or swapped in mid-way is removed, never entered), and never climbing out of the
folder it empties (going up, each parent is checked to be the folder it came from, by device and inode; if
a folder was moved meanwhile it stops there). A folder it may not enter (mode 000) is made 0700 first; what
it cannot remove it leaves and goes on. Bounded: `max_steps` operations in all."""
from __future__ import annotations

TREE = r'''
def empty_folder(top_fd, max_steps=10000000):
    """Remove everything inside the open folder `top_fd`; True when it is empty."""
    import os, stat
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    def enter(name, parent):
        try:
            return os.open(name, flags, dir_fd=parent)
        except PermissionError:
            try:
                os.chmod(name, 0o700, dir_fd=parent, follow_symlinks=False)
            except (OSError, NotImplementedError):
                try:  # Linux: chmod through an O_PATH descriptor, never a symlink's target
                    p = os.open(name, getattr(os, "O_PATH", 0) | flags, dir_fd=parent)
                    try:
                        os.chmod("/proc/self/fd/%d" % p, 0o700)
                    finally:
                        os.close(p)
                except OSError:
                    return None
            try:
                return os.open(name, flags, dir_fd=parent)
            except OSError:
                return None
        except OSError:
            return None
    top = os.fstat(top_fd)
    cur, path, stuck, steps = os.dup(top_fd), [], set(), 0  # path: (name, dev, ino) of each folder below top
    try:
        while steps < max_steps:
            steps += 1
            sub = None
            try:
                with os.scandir(cur) as it:
                    for e in it:
                        steps += 1
                        try:
                            if e.is_dir(follow_symlinks=False):
                                if (e.inode(),) not in stuck:
                                    sub = e.name
                                    break
                            else:
                                os.unlink(e.name, dir_fd=cur)
                        except OSError:
                            pass
                        if steps >= max_steps:
                            break
            except OSError:
                pass
            if sub is not None:
                child = enter(sub, cur)
                if child is None:
                    try:
                        stuck.add((os.stat(sub, dir_fd=cur, follow_symlinks=False).st_ino,))
                    except OSError:
                        pass
                    continue
                st = os.fstat(child)
                path.append((sub, st.st_dev, st.st_ino))
                os.close(cur)
                cur = child
                continue
            if not path:
                try:
                    with os.scandir(cur) as it:
                        return next(it, None) is None
                except OSError:
                    return False
            name, dev, ino = path.pop()
            want = (path[-1][1], path[-1][2]) if path else (top.st_dev, top.st_ino)
            try:
                parent = os.open("..", flags, dir_fd=cur)
            except OSError:
                return False
            pst = os.fstat(parent)
            os.close(cur)
            cur = parent
            if (pst.st_dev, pst.st_ino) != want:  # the folder was moved out: stop, never work outside top
                return False
            try:
                os.rmdir(name, dir_fd=cur)
            except OSError:
                stuck.add((ino,))
        return False
    finally:
        os.close(cur)
'''
exec(TREE)  # defines empty_folder here (pyflakes cannot see it): the harness runs the same text


def remove_tree(path: str, max_steps: int = 10_000_000) -> bool:
    """Remove `path` (a folder, a file or a symlink: a symlink is removed, never followed) and all it holds,
    iteratively (see the module docstring). Never raises; True when `path` is gone."""
    import os
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(path)
            return True
        return remove_folder_by_fd(path, None, max_steps)
    except Exception:  # noqa: BLE001 - cleaning up must never stop a run
        return False


def remove_folder_by_fd(path: str, fd, max_steps: int = 10_000_000, _again: bool = True) -> bool:
    """Empty the folder open as `fd` (opened from `path` here if None) and remove `path` if it is still that
    folder; a symlink or another folder planted at `path` meanwhile is removed as it is (never entered). Never
    raises; True when `path` is gone."""
    import os
    import stat

    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    own = fd is None
    try:
        if own:
            try:
                fd = os.open(path, flags)
            except PermissionError:
                os.chmod(path, 0o700)
                fd = os.open(path, flags)
        mine = os.fstat(fd)
        empty_folder(fd, max_steps)
        try:
            now = os.lstat(path)
        except FileNotFoundError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
            os.rmdir(path)
            return True
        if not own:  # moved away by a program: found in the same parent folder by its inode, removed (empty now)
            parent = os.path.dirname(os.path.abspath(path))
            try:
                with os.scandir(parent) as it:
                    for e in it:
                        if e.inode() == mine.st_ino and e.is_dir(follow_symlinks=False):
                            st = os.lstat(e.path)
                            if (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino):
                                os.rmdir(e.path)
                            break
            except OSError:
                pass
        if now is None:
            return True
        if not stat.S_ISDIR(now.st_mode):  # a symlink (or file) planted at the path: removed, not followed
            os.unlink(path)
            return True
        # another folder put there meanwhile (the harness makes a new working folder where a program removed
        # or replaced its own): removed too, once (a folder that keeps coming back is left to `_cleanup_stale`)
        return _again and remove_folder_by_fd(path, None, max_steps, _again=False)
    except Exception:  # noqa: BLE001 - cleaning up must never stop a run
        return False
    finally:
        if own and fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
