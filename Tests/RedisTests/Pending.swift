// Until the Redis tests land from the redis branch.
