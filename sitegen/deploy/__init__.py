"""`sitegen deploy`: publishing the committed output to object storage, sending only what changed.

Role: a room of its own (DESIGN.md: "deploy/ object-storage publishing from the
manifest"). Its configuration, `[deploy.NAME]`, is `sitegen.configdeploy`'s; `plan` decides
(pure) what to send and in which order, `objects` the headers of each object, `marker` the
bucket's record of the deploy that made it, `s3` is the only module that talks to a store
(and the only boto3 user), `run` is the command. This
package must never import boto3 at import time (it is the optional `[deploy]` extra),
never read a credential from site.toml, and never print one.
"""
