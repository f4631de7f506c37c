"""OpenStack Swift with its S3 API, for tests: proxy (s3api + tempauth), account, container and
object servers in ONE process, each on a free 127.0.0.1 port, everything under one folder.

Run with Debian's Python (the python3-swift package):

    /usr/bin/python3 -E -s swift_s3_server.py --dir DIR [--port PORT]

DIR holds the configuration, rings and data (created when missing, reused when present, so a
killed server restarted on the same DIR finds its objects again). The proxy listens on PORT (0 or
absent: a free one). When every server listens, one line `ready <proxy port>` goes to stdout.
S3 credentials: access key `test:tester`, secret key `testing`. Never reads /etc/swift.
"""
import argparse
import os
import sys
import time

# swift_conditional_put.py beside this file: the proxy pipeline loads it by module name.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import eventlet

eventlet.patcher.monkey_patch(all=False, socket=True, select=True, thread=True)

from eventlet import wsgi  # noqa: E402

from swift.common import storage_policy, utils  # noqa: E402
from swift.common.ring import RingBuilder  # noqa: E402
from swift.common.wsgi import SwiftHttpProtocol, loadapp  # noqa: E402

ACCESS_KEY = 'test:tester'
SECRET_KEY = 'testing'
DEVICE = 'd0'


class MemoryCache(object):
    """The memcache client's interface over a dict: tempauth and s3api need a cache, and one
    process needs no memcached. Expiry is honoured so tokens and cached listings age out."""

    def __init__(self):
        self.entries = {}

    def _live(self, key):
        entry = self.entries.get(key)
        if entry is None:
            return None
        value, expires = entry
        if expires and expires < time.time():
            del self.entries[key]
            return None
        return entry

    def get(self, key, raise_on_error=False):
        entry = self._live(key)
        return None if entry is None else entry[0]

    def set(self, key, value, serialize=True, time=0, min_compress_len=0, raise_on_error=False):
        self.entries[key] = (value, _expiry(time))

    def incr(self, key, delta=1, time=0):
        entry = self._live(key)
        value = (int(entry[0]) if entry else 0) + int(delta)
        value = max(value, 0)
        self.entries[key] = (value, entry[1] if entry else _expiry(time))
        return value

    def decr(self, key, delta=1, time=0):
        return self.incr(key, -int(delta), time)

    def delete(self, key, server_key=None):
        self.entries.pop(key, None)

    def set_multi(self, mapping, server_key, serialize=True, time=0, min_compress_len=0):
        for key, value in mapping.items():
            self.set(key, value, time=time)

    def get_multi(self, keys, server_key):
        return [self.get(key) for key in keys]



class NoUserXattrs(Exception):
    """The data folder's file system cannot store the user extended attributes Swift needs."""


def _expiry(seconds):
    if not seconds:
        return 0
    # memcache semantics: large values are absolute times.
    return seconds if seconds > 30 * 24 * 3600 else time.time() + seconds


def with_cache(app, cache):
    def middleware(env, start_response):
        env['swift.cache'] = cache
        return app(env, start_response)
    return middleware


def check_xattrs(folder):
    probe = os.path.join(folder, '.xattr-probe')
    write(probe, '')
    try:
        os.setxattr(probe, 'user.test', b'1')
    except OSError as error:
        raise NoUserXattrs('%s has no user extended attributes (%s): the object server needs them; '
                         'use a folder on ext4, xfs or btrfs' % (folder, error))
    finally:
        os.unlink(probe)


def write(path, text):
    with open(path, 'w') as handle:
        handle.write(text)


def build_ring(swift_dir, name, port):
    builder = RingBuilder(4, 1, 0)
    builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': port,
                     'device': DEVICE, 'weight': 1.0})
    builder.rebalance()
    builder.get_ring().save(os.path.join(swift_dir, '%s.ring.gz' % name))


def server_conf(swift_dir, devices, app):
    return """[DEFAULT]
swift_dir = {swift_dir}
devices = {devices}
mount_check = false
log_level = ERROR
log_address = /nonexistent

[pipeline:main]
pipeline = {app}-server

[app:{app}-server]
use = egg:swift#{app}
""".format(swift_dir=swift_dir, devices=devices, app=app)


PROXY_CONF = """[DEFAULT]
swift_dir = {swift_dir}
log_level = ERROR
log_address = /nonexistent

[pipeline:main]
pipeline = catch_errors gatekeeper listing_formats conditional_put_in s3api tempauth copy slo dlo conditional_put_out proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
allow_account_management = true
# One process serves the proxy and the storage servers: under load (three packs reading at once)
# its connection to the object server can take more than the default 0.5 s, and after 10 such
# errors the proxy error-limits the node for a minute. The rings have one node each, so there is
# nowhere else to go: every object request was answered 503 for that minute, longer than any
# client's retries. Hence a patient connection and no error limiting (a 507, a full disk, still
# limits the node: error_limit() sets the count past any limit).
conn_timeout = 5
error_suppression_limit = 1000000000

[filter:catch_errors]
use = egg:swift#catch_errors

[filter:gatekeeper]
use = egg:swift#gatekeeper

[filter:listing_formats]
use = egg:swift#listing_formats

[filter:conditional_put_in]
paste.filter_factory = swift_conditional_put:in_factory

[filter:conditional_put_out]
paste.filter_factory = swift_conditional_put:out_factory

[filter:s3api]
use = egg:swift#s3api
location = us-east-1
allow_multipart_uploads = true
check_bucket_owner = false

[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = {secret} .admin

[filter:copy]
use = egg:swift#copy

[filter:slo]
use = egg:swift#slo

[filter:dlo]
use = egg:swift#dlo
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dir', required=True)
    parser.add_argument('--port', type=int, default=0)
    args = parser.parse_args()

    root = os.path.abspath(args.dir)
    swift_dir = os.path.join(root, 'etc')
    devices = os.path.join(root, 'srv')
    os.makedirs(swift_dir, exist_ok=True)
    os.makedirs(os.path.join(devices, DEVICE), exist_ok=True)
    check_xattrs(os.path.join(devices, DEVICE))
    os.environ['TZ'] = 'UTC+0'
    time.tzset()

    write(os.path.join(swift_dir, 'swift.conf'), """[swift-hash]
swift_hash_path_suffix = cdk-training-io-tests
swift_hash_path_prefix = cdk-training-io-tests

[storage-policy:0]
name = default
default = yes
""")
    utils.set_swift_dir(swift_dir)
    storage_policy.reload_storage_policies()

    sockets = {}
    for name in ('account', 'container', 'object'):
        sockets[name] = eventlet.listen(('127.0.0.1', 0))
    sockets['proxy'] = eventlet.listen(('127.0.0.1', args.port))
    for name in ('account', 'container', 'object'):
        build_ring(swift_dir, name, sockets[name].getsockname()[1])

    apps = {}
    for name in ('account', 'container', 'object'):
        conf = os.path.join(swift_dir, '%s-server.conf' % name)
        write(conf, server_conf(swift_dir, devices, name))
        apps[name] = loadapp(conf)
    proxy_conf = os.path.join(swift_dir, 'proxy-server.conf')
    write(proxy_conf, PROXY_CONF.format(swift_dir=swift_dir, secret=SECRET_KEY))
    apps['proxy'] = with_cache(loadapp(proxy_conf), MemoryCache())

    servers = []
    for name, app in apps.items():
        servers.append(eventlet.spawn(
            wsgi.server, sockets[name], app, log=utils.NullLogger(), protocol=SwiftHttpProtocol,
            capitalize_response_headers=False, socket_timeout=60, log_output=False))
    sys.stdout.write('ready %d\n' % sockets['proxy'].getsockname()[1])
    sys.stdout.flush()
    for server in servers:
        server.wait()


if __name__ == '__main__':
    main()
