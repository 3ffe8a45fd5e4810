from django.http import HttpResponse


def calculator(request):
    # Replaced by the public calculator (scoring issue).
    return HttpResponse("calculator")
