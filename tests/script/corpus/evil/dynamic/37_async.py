# expect: static async
async def f():
    pass
