"""Conditional object creation (`PUT` with `If-None-Match: *`) through Swift's S3 API, for tests.

Amazon S3 has created objects only if absent since August 2024; dataset versions are published
that way (lambda/packing/publish.ts). Swift's object server implements `If-None-Match: *` on PUT
itself, but its s3api middleware (2.30) answers 501 to any conditional PUT. Two filters let the
header through: `conditional_put_in` (before s3api) takes it off the S3 request, and
`conditional_put_out` (after s3api) puts it back on the Swift object PUT, where Swift answers 412,
which s3api reports as PreconditionFailed, as AWS does. Conditional PUTs run one at a time (this
server is one process), so "only if absent" holds between them as it does on AWS.
"""
from eventlet.semaphore import Semaphore

_ENV_KEY = 'cdk_training_io.if_none_match'
_ONE_AT_A_TIME = Semaphore(1)


class ConditionalPutIn(object):
    def __init__(self, app):
        self.app = app

    def __call__(self, env, start_response):
        if env.get('REQUEST_METHOD') == 'PUT' and env.get('HTTP_IF_NONE_MATCH', '').strip() == '*':
            del env['HTTP_IF_NONE_MATCH']
            env[_ENV_KEY] = '*'
        return self.app(env, start_response)


class ConditionalPutOut(object):
    def __init__(self, app):
        self.app = app

    def __call__(self, env, start_response):
        if env.get(_ENV_KEY) != '*' or env.get('REQUEST_METHOD') != 'PUT':
            return self.app(env, start_response)
        env['HTTP_IF_NONE_MATCH'] = '*'
        with _ONE_AT_A_TIME:
            # The whole response inside the lock: the object is committed when the body has been sent.
            return list(self.app(env, start_response))


def in_factory(global_conf, **local_conf):
    return ConditionalPutIn


def out_factory(global_conf, **local_conf):
    return ConditionalPutOut
